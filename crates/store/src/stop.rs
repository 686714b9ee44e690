//! [`Stop`]: what cuts a transactional write short of its COMMIT (the
//! recorder's shutdown deadline), and only then.
//!
//! A write cut off while its COMMIT is on the way can still land: SQLite's
//! COMMIT runs on sqlx's worker thread whether or not anyone awaits its
//! answer, and a server that has the COMMIT commits. The shutdown report
//! once counted such a batch as abandoned while the database held it. So
//! the statements up to the COMMIT are raced against the stop (cut off,
//! the transaction rolls back: nothing of it is written), and the COMMIT,
//! once sent, is awaited to its answer (bounded as it was: on PostgreSQL by
//! the writer's deadline, then unsure; SQLite answers in this process).

use std::future::Future;
use std::pin::Pin;

/// A future that ends a write before its COMMIT, or none ([`Stop::never`]).
pub(crate) struct Stop<'a> {
    at: Option<Pin<&'a mut (dyn Future<Output = ()> + Send)>>,
    /// It has come: never polled again (an `async` block panics if polled
    /// after it finished).
    came: bool,
}

// === impl Stop ===

impl<'a> Stop<'a> {
    /// Writes that run to their end.
    pub(crate) fn never() -> Self {
        Stop {
            at: None,
            came: false,
        }
    }

    /// Writes cut off when `at` finishes, up to their COMMIT.
    pub(crate) fn at(at: Pin<&'a mut (dyn Future<Output = ()> + Send)>) -> Self {
        Stop {
            at: Some(at),
            came: false,
        }
    }

    /// `work` (a step before the COMMIT), unless the stop comes first or
    /// came before: `None`, and `work` is dropped where it was. When both
    /// are ready at once the stop wins.
    pub(crate) async fn before<T>(&mut self, work: impl Future<Output = T>) -> Option<T> {
        if self.came {
            return None;
        }
        let Some(at) = self.at.as_mut() else {
            return Some(work.await);
        };
        tokio::select! {
            biased;
            () = at.as_mut() => {
                self.came = true;
                None
            }
            out = work => Some(out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn never_lets_the_work_finish() {
        assert_eq!(Stop::never().before(async { 7 }).await, Some(7));
    }

    #[tokio::test]
    async fn a_stop_that_came_wins_and_stays() {
        let mut at = std::pin::pin!(async {});
        let mut stop = Stop::at(at.as_mut());
        assert_eq!(stop.before(async { 1 }).await, None);
        // Not polled again (it would panic): still stopped.
        assert_eq!(stop.before(async { 2 }).await, None);
    }

    #[tokio::test]
    async fn work_that_ends_first_ends() {
        let mut at = std::pin::pin!(std::future::pending::<()>());
        let mut stop = Stop::at(at.as_mut());
        assert_eq!(stop.before(async { 3 }).await, Some(3));
        let mut at = std::pin::pin!(tokio::time::sleep(std::time::Duration::from_millis(5)));
        let mut slow = Stop::at(at.as_mut());
        let cut = slow.before(std::future::pending::<()>()).await;
        assert_eq!(cut, None);
    }
}
