//! Stopping: the flags the server raises (stop accepting; the grace period
//! is over) and [`raised`], which both HTTP paths await. A leaf.

use tokio::sync::watch;

/// Completes once the flag is `true` (or its sender is gone).
pub(crate) async fn raised(flag: &mut watch::Receiver<bool>) {
    let _ = flag.wait_for(|raised| *raised).await;
}
