//! Concurrency slots, and the slot a running call lends to the calls its
//! tool makes on the same executor (nested calls).
//!
//! A call holds one of the executor's `concurrency` slots while its tool
//! runs. A tool that calls the executor again and waits for the answer
//! would, were the nested call to wait for a slot of its own, deadlock as
//! soon as every slot is held by such a parent: each parent waits for its
//! child, each child for a slot only a parent can free. So a nested call
//! is told apart (the parent's tool runs within a task-local naming the
//! executor, and the calls it is itself nested in, on any executor) and
//! never waits for the executor's slots: it takes one if one is free,
//! else it runs in its parent's slot, which the parent lends while its
//! tool runs. The parent is the nearest call of the same executor the
//! call is made within, through calls on other executors too (a tool of
//! executor A calls executor B, whose tool calls A again): each waits
//! for the one it made. A parent lends its slot to one nested call at a
//! time (its other nested calls wait for it, or for a free slot), so the
//! calls that run at once still number at most `concurrency` besides
//! parents waiting for their children. A nested call of a `sequential`
//! tool that a call it is nested in is running (on any executor: the
//! lock is the registry's) would wait for its own ancestor's lock: it is
//! refused at once instead.
//!
//! Not refused: a circle through another executor's slots (a `sequential`
//! call's tool waits for a slot of executor B, each held by a call whose
//! nested call waits for that lock) or through two locks. Whether it is
//! one depends on whether each tool awaits its nested call alone, which
//! nothing here sees; a timeout in the circle ends it (README, "The
//! runtime library").

use std::sync::{
    Arc, OnceLock,
    atomic::{AtomicU64, Ordering::Relaxed},
};

use futures_util::future::{Either, select};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, SemaphorePermit};

use crate::registry::NameLock;

tokio::task_local! {
    /// The call whose tool is running here: its executor, the slot it
    /// lends the calls its tool makes on that executor, and the call it
    /// is nested in.
    static RUNNING: Arc<Lender>;
}

/// A call's place in the executor's concurrency: the slot it holds, if
/// any (one of the executor's, or the one its parent lends it).
#[derive(Debug)]
pub(super) struct Place<'a> {
    pool: &'a Semaphore,
    executor: u64,
    held: Option<Held<'a>>,
}

/// A slot held, freed when dropped.
#[derive(Debug)]
enum Held<'a> {
    /// One of the executor's own slots.
    Own { _permit: SemaphorePermit<'a> },
    /// The slot a parent call lends to its nested calls.
    Lent { _permit: OwnedSemaphorePermit },
}

/// What a running call lends its nested calls.
#[derive(Debug)]
pub(super) struct Lender {
    executor: u64,
    /// Made when a nested call first waits for it (most calls make none).
    slot: OnceLock<Arc<Semaphore>>,
    /// The `sequential` locks this call and the calls it is nested in
    /// (on any executor) hold: a nested call waiting for one of them
    /// would wait for itself.
    sequential: Vec<NameLock>,
    /// The call whose tool made this one, on this executor or another.
    outer: Option<Arc<Lender>>,
}

/// An executor's identity, for telling its nested calls apart.
pub(super) fn next_executor_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Relaxed)
}

// === impl Place ===

impl<'a> Place<'a> {
    /// The place of a call of executor `executor`, whose slots are
    /// `pool`, made here (nested, or not); it holds no slot yet.
    pub(super) fn new(pool: &'a Semaphore, executor: u64) -> Self {
        Place {
            pool,
            executor,
            held: None,
        }
    }

    /// Take a free slot of the executor's, if there is one.
    pub(super) fn try_take(&mut self) -> bool {
        if let Ok(permit) = self.pool.try_acquire() {
            self.held = Some(Held::Own { _permit: permit });
        }
        self.held.is_some()
    }

    /// Wait for a slot of the executor's; a nested call, for whichever
    /// comes first of one of those and its parent's.
    pub(super) async fn wait(&mut self) {
        let Some(lent) = Lender::of_caller(self.executor) else {
            self.held = self
                .pool
                .acquire()
                .await
                .ok()
                .map(|p| Held::Own { _permit: p });
            return;
        };
        let own = Box::pin(self.pool.acquire());
        let parents = Box::pin(lent.acquire_owned());
        // The semaphores are never closed: `acquire` fails only if they were.
        self.held = match select(own, parents).await {
            Either::Left((permit, _)) => permit.ok().map(|p| Held::Own { _permit: p }),
            Either::Right((permit, _)) => permit.ok().map(|p| Held::Lent { _permit: p }),
        };
    }

    /// Give the slot back (while waiting to retry).
    pub(super) fn give_back(&mut self) {
        self.held = None;
    }
}

// === impl Lender ===

impl Lender {
    /// A lender for a call of executor `executor` that holds a slot (and
    /// `sequential`, its tool's lock, when it holds that), made here.
    pub(super) fn new(executor: u64, sequential: Option<&NameLock>) -> Self {
        let outer = RUNNING.try_with(Arc::clone).ok();
        let mut held = outer
            .as_ref()
            .map(|l| l.sequential.clone())
            .unwrap_or_default();
        held.extend(sequential.cloned());
        Lender {
            executor,
            slot: OnceLock::new(),
            sequential: held,
            outer,
        }
    }

    /// Whether a call made here is nested in a call that holds `lock`
    /// (the `sequential` lock of the call's tool), on any executor.
    pub(super) fn holds(lock: &NameLock) -> bool {
        RUNNING
            .try_with(|l| l.sequential.iter().any(|h| Arc::ptr_eq(h, lock)))
            .unwrap_or(false)
    }

    /// The slot lent to a call of executor `executor` made here: `Some`
    /// when the call is nested in a call of that executor whose tool is
    /// running (the nearest such call, through calls on other executors).
    fn of_caller(executor: u64) -> Option<Arc<Semaphore>> {
        RUNNING
            .try_with(|l| {
                let mut at = Some(l);
                while let Some(l) = at {
                    if l.executor == executor {
                        let slot = l.slot.get_or_init(|| Arc::new(Semaphore::new(1)));
                        return Some(Arc::clone(slot));
                    }
                    at = l.outer.as_ref();
                }
                None
            })
            .ok()
            .flatten()
    }

    /// Run `fut` (the tool's) lending this call's slot to the calls it
    /// makes.
    pub(super) fn lend<F: Future>(self, fut: F) -> impl Future<Output = F::Output> {
        RUNNING.scope(Arc::new(self), fut)
    }
}
