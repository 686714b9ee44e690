//! A floor process measured beside the gateway (the blocking relay, the
//! TCP relay, the HTTP relay, the gateway without recording): its added
//! latency per block and its CPU.

use crate::{
    Row, child,
    load::{Shape, percentile_ms, sequential},
    ms,
};

/// A floor process measured beside the gateway: its latency blocks (each
/// block's p50 minus the direct p50 just before it) and its CPU.
pub(crate) struct Floor {
    pub(crate) child: child::GatewayChild,
    cpu_start: f64,
    added_ms: Vec<f64>,
    requests: usize,
}

impl Floor {
    pub(crate) fn new(child: child::GatewayChild) -> Floor {
        Floor {
            cpu_start: child.cpu_secs_fine(),
            child,
            added_ms: Vec::new(),
            requests: 0,
        }
    }

    /// One block of `n` sequential requests, against the direct p50 `direct_p50`.
    pub(crate) async fn block(
        &mut self,
        shape: &Shape,
        n: usize,
        session: &dyn Fn(usize) -> Option<String>,
        direct_p50: f64,
    ) -> Result<(), String> {
        let (mut totals, _) = sequential(self.child.addr, shape, n, session).await?;
        self.added_ms
            .push(percentile_ms(&mut totals, 50.0) - direct_p50);
        self.requests += totals.len();
        Ok(())
    }

    /// CPU µs per request of the blocks so far (since [`Floor::new`]).
    pub(crate) fn cpu_us(&self) -> f64 {
        (self.child.cpu_secs_fine() - self.cpu_start) * 1e6 / self.requests.max(1) as f64
    }

    /// The median added p50 over the blocks and the CPU per request so far.
    pub(crate) fn row(&mut self, what: &str) -> Row {
        let cpu_us = self.cpu_us();
        self.added_ms.sort_by(f64::total_cmp);
        let added = self
            .added_ms
            .get(self.added_ms.len() / 2)
            .copied()
            .unwrap_or(f64::NAN);
        Row {
            what: format!("{what} ({}): added p50 / CPU per request", self.requests),
            direct: "–".into(),
            gateway: format!("{cpu_us:.1} µs CPU"),
            delta: format!("+{}", ms(added)),
            target: "reference",
        }
    }
}
