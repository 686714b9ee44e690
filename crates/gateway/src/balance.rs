//! Client connections spread evenly over the proxy workers (issue 14).
//!
//! Every worker accepts from the one listening socket, and a new connection
//! wakes all of them; the worker that is already running wins the race. So
//! under load the busiest worker took nearly every new connection (in a
//! 32-connection soak on two workers one used 39–42 % of a core and the
//! other 6 %: BENCHMARKS.md, "Connections spread over the workers"), and a
//! gateway on a larger machine would have proxied on one core. Now a worker keeps
//! a connection it accepted only while it serves no more connections than
//! the least loaded worker; otherwise it hands the socket to that worker,
//! through a bounded inbox. That is one cross-thread wake-up per connection
//! handed over, none per request: agents keep their connections alive for
//! the whole run.
//!
//! A connection counts for the worker that serves it for as long as its
//! [`Load`] lives (the worker's task for that connection holds it).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::mpsc;

use crate::limits::Slot;

/// Connections handed over and not yet taken, per worker: a burst of
/// connections beyond this is served where it was accepted.
const INBOX: usize = 256;

/// Open connections per worker, and each worker's inbox.
#[derive(Debug)]
pub(crate) struct Balance {
    open: Box<[AtomicUsize]>,
    inboxes: Box<[mpsc::Sender<Handed>]>,
}

/// A connection one worker accepted for another.
#[derive(Debug)]
pub(crate) struct Handed {
    pub stream: std::net::TcpStream,
    pub peer: SocketAddr,
    /// Its place under `max_client_connections`.
    pub slot: Slot,
    /// Its place in the receiving worker's count.
    pub load: Load,
}

/// One connection counted for one worker; dropping it uncounts it.
#[derive(Debug)]
pub(crate) struct Load {
    balance: Arc<Balance>,
    worker: usize,
}

/// Where an accepted connection goes.
#[derive(Debug)]
pub(crate) enum Placement {
    /// The accepting worker serves it.
    Keep(Load),
    /// Another worker is less loaded: hand it over.
    Hand(Load),
}

impl Balance {
    /// A balance over `workers` workers (at least one), and each worker's
    /// inbox, in order.
    pub(crate) fn new(workers: usize) -> (Arc<Balance>, Vec<mpsc::Receiver<Handed>>) {
        let workers = workers.max(1);
        let (senders, receivers): (Vec<_>, Vec<_>) =
            (0..workers).map(|_| mpsc::channel(INBOX)).unzip();
        let balance = Balance {
            open: (0..workers).map(|_| AtomicUsize::new(0)).collect(),
            inboxes: senders.into_boxed_slice(),
        };
        (Arc::new(balance), receivers)
    }

    /// Counts a connection worker `me` just accepted for the worker that
    /// should serve it: `me` while it serves no more than the least loaded
    /// worker (ties stay), else the least loaded one.
    pub(crate) fn place(self: &Arc<Self>, me: usize) -> Placement {
        let mine = self.open[me].load(Ordering::Acquire);
        let (least, fewest) = self
            .open
            .iter()
            .map(|n| n.load(Ordering::Acquire))
            .enumerate()
            .min_by_key(|&(_, n)| n)
            .unwrap_or((me, mine));
        if mine <= fewest {
            Placement::Keep(self.count(me))
        } else {
            Placement::Hand(self.count(least))
        }
    }

    /// Counts a connection for `worker`.
    pub(crate) fn count(self: &Arc<Self>, worker: usize) -> Load {
        self.open[worker].fetch_add(1, Ordering::AcqRel);
        Load {
            balance: self.clone(),
            worker,
        }
    }

    /// Puts a connection in its worker's inbox; gives it back when the
    /// inbox is full or its worker has stopped.
    pub(crate) fn hand(&self, handed: Handed) -> Result<(), Handed> {
        let to = handed.load.worker;
        self.inboxes[to].try_send(handed).map_err(|e| match e {
            mpsc::error::TrySendError::Full(h) | mpsc::error::TrySendError::Closed(h) => h,
        })
    }

    /// Open connections per worker, in order (`/healthz`).
    pub(crate) fn open(&self) -> Vec<usize> {
        self.open
            .iter()
            .map(|n| n.load(Ordering::Acquire))
            .collect()
    }
}

impl Load {
    /// The worker this connection is counted for.
    #[cfg(test)]
    pub(crate) fn worker(&self) -> usize {
        self.worker
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        self.balance.open[self.worker].fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(p: Placement) -> Option<Load> {
        match p {
            Placement::Keep(load) => Some(load),
            Placement::Hand(_) => None,
        }
    }

    #[test]
    fn one_worker_accepting_everything_ends_up_with_its_share() {
        // Worker 0 wins every accept race, as the busiest worker does.
        let (balance, _inboxes) = Balance::new(2);
        let loads: Vec<Load> = (0..32)
            .map(|_| match balance.place(0) {
                Placement::Keep(load) | Placement::Hand(load) => load,
            })
            .collect();
        assert_eq!(balance.open(), vec![16, 16]);
        assert_eq!(loads.iter().filter(|l| l.worker() == 1).count(), 16);
        drop(loads);
        assert_eq!(balance.open(), vec![0, 0]);
    }

    #[test]
    fn a_worker_keeps_while_it_is_among_the_least_loaded() {
        let (balance, _inboxes) = Balance::new(3);
        let a = kept(balance.place(0)).expect("all idle: keep");
        let b = kept(balance.place(1)).expect("tied at the fewest: keep");
        assert!(kept(balance.place(0)).is_none(), "worker 2 has none");
        drop((a, b));
    }

    #[test]
    fn closing_connections_moves_new_ones_back() {
        let (balance, _inboxes) = Balance::new(2);
        let first = kept(balance.place(0)).unwrap();
        let Placement::Hand(second) = balance.place(0) else {
            panic!("worker 1 has none: hand over");
        };
        assert_eq!(second.worker(), 1);
        drop(first);
        assert!(kept(balance.place(0)).is_some(), "worker 0 has none again");
        drop(second);
    }

    #[test]
    fn a_full_or_closed_inbox_gives_the_connection_back() {
        let (balance, mut inboxes) = Balance::new(2);
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let handed = |balance: &Arc<Balance>| {
            let _client = std::net::TcpStream::connect(addr).unwrap();
            let (stream, peer) = listener.accept().unwrap();
            Handed {
                stream,
                peer,
                slot: crate::limits::ConnectionSlots::new(8).try_take().unwrap(),
                load: balance.count(1),
            }
        };
        for _ in 0..INBOX {
            balance.hand(handed(&balance)).unwrap();
        }
        assert!(balance.hand(handed(&balance)).is_err(), "inbox full");
        assert_eq!(balance.open()[1], INBOX, "the refused one is uncounted");
        drop(inboxes.remove(1));
        assert_eq!(balance.open()[1], 0, "dropped with the closed inbox");
        assert!(balance.hand(handed(&balance)).is_err(), "worker stopped");
    }
}
