//! One priority level's seats and queues: shuffle-sharded fair queuing, as
//! upstream's `queueset`.
//!
//! A request of a flow (a hash of its FlowSchema and distinguisher) is
//! dealt a hand of `hand_size` queues out of `queues`, and joins the
//! shortest of them (by seats waiting and executing): one heavy flow fills
//! at most its hand, other flows almost always have a queue it does not
//! use. When seats free up, the non-empty queue with the smallest virtual
//! start time goes next and its virtual start advances by the seats its
//! request takes, so queues share the level's seats in proportion to
//! demand, not arrival order. Everything here is synchronous and runs under
//! the dispatcher's lock; waiting is done by the caller.

use std::collections::VecDeque;

use tokio::sync::oneshot;

/// How a level without queues or with full queues answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RejectReason {
    /// The level rejects when its seats are taken (`limitResponse.type: Reject`).
    ConcurrencyLimit,
    /// The chosen queue held `queueLengthLimit` requests.
    QueueFull,
    /// The request waited as long as it may.
    TimeOut,
}

impl RejectReason {
    /// The `reason` label of `apiserver_flowcontrol_rejected_requests_total`.
    pub fn label(self) -> &'static str {
        match self {
            RejectReason::ConcurrencyLimit => "concurrency-limit",
            RejectReason::QueueFull => "queue-full",
            RejectReason::TimeOut => "time-out",
        }
    }
}

/// Queuing parameters (`limitResponse.queuing`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Queuing {
    pub queues: usize,
    pub hand_size: usize,
    pub queue_length_limit: usize,
}

/// A waiting request.
pub struct Waiter {
    pub id: u64,
    pub seats: u32,
    pub flow: u64,
    /// Told the queue it ran from when the request may run
    /// (`usize::MAX`: none).
    pub tx: oneshot::Sender<usize>,
}

#[derive(Default)]
struct Queue {
    waiting: VecDeque<Waiter>,
    waiting_seats: u32,
    executing_seats: u32,
    virtual_start: u64,
}

/// The outcome of an arrival.
pub enum Arrival {
    /// Run now, holding `seats` from queue `queue` (if queued).
    Dispatched {
        queue: Option<usize>,
    },
    /// Wait to be told.
    Queued {
        queue: usize,
    },
    Rejected(RejectReason),
}

/// A level's seats and queues.
pub struct QueueSet {
    queuing: Option<Queuing>,
    queues: Vec<Queue>,
    clock: u64,
    /// Seats taken by executing requests.
    pub seats_in_use: u32,
    /// The seats the level may use now (after borrowing or lending).
    pub limit: u32,
    /// The most seats in use or waiting since the last borrowing pass.
    pub demand_high_water: u32,
}

impl QueueSet {
    /// A level with `limit` seats, queuing as `queuing` says (`None`: reject
    /// when full).
    pub fn new(queuing: Option<Queuing>, limit: u32) -> QueueSet {
        let n = queuing.map(|q| q.queues.max(1)).unwrap_or(0);
        QueueSet {
            queuing,
            queues: (0..n).map(|_| Queue::default()).collect(),
            clock: 0,
            seats_in_use: 0,
            limit,
            demand_high_water: 0,
        }
    }

    /// The queuing parameters.
    pub fn queuing(&self) -> Option<Queuing> {
        self.queuing
    }

    /// Requests waiting in all queues.
    pub fn waiting(&self) -> usize {
        self.queues.iter().map(|q| q.waiting.len()).sum()
    }

    fn waiting_seats(&self) -> u32 {
        self.queues.iter().map(|q| q.waiting_seats).sum()
    }

    fn note_demand(&mut self) {
        let demand = self.seats_in_use + self.waiting_seats();
        self.demand_high_water = self.demand_high_water.max(demand);
    }

    /// The demand now, to restart the high-water mark from.
    pub fn current_demand(&self) -> u32 {
        self.seats_in_use + self.waiting_seats()
    }

    fn fits(&self, seats: u32) -> bool {
        // A request wider than the whole level still runs alone.
        self.seats_in_use == 0 || self.seats_in_use + seats <= self.limit
    }

    /// The queue a request of `flow` joins: the least loaded of its hand.
    fn choose(&self, flow: u64, hand_size: usize) -> usize {
        let deck = self.queues.len();
        let hand = hand_size.clamp(1, deck);
        let mut chosen: Vec<usize> = Vec::with_capacity(hand);
        let mut h = flow;
        for i in 0..hand {
            let remaining = (deck - i) as u64;
            let mut card = (h % remaining) as usize;
            h /= remaining;
            // The card-th queue not dealt yet.
            let mut q = 0;
            loop {
                if !chosen.contains(&q) {
                    if card == 0 {
                        break;
                    }
                    card -= 1;
                }
                q += 1;
            }
            chosen.push(q);
        }
        chosen
            .into_iter()
            .min_by_key(|&q| {
                let queue = &self.queues[q];
                (queue.waiting_seats + queue.executing_seats, q)
            })
            .unwrap_or(0)
    }

    /// A request of `seats` seats (already capped) of `flow` arrives.
    pub fn arrive(
        &mut self,
        id: u64,
        seats: u32,
        flow: u64,
        tx: oneshot::Sender<usize>,
    ) -> (Arrival, Option<oneshot::Sender<usize>>) {
        let Some(q) = self.queuing else {
            if self.fits(seats) {
                self.seats_in_use += seats;
                self.note_demand();
                return (Arrival::Dispatched { queue: None }, Some(tx));
            }
            return (Arrival::Rejected(RejectReason::ConcurrencyLimit), Some(tx));
        };
        let idx = self.choose(flow, q.hand_size);
        let clock = self.clock;
        let nobody_waits = self.waiting() == 0;
        if nobody_waits && self.fits(seats) {
            let queue = &mut self.queues[idx];
            queue.virtual_start = queue.virtual_start.max(clock) + u64::from(seats);
            queue.executing_seats += seats;
            self.seats_in_use += seats;
            self.note_demand();
            return (Arrival::Dispatched { queue: Some(idx) }, Some(tx));
        }
        let queue = &mut self.queues[idx];
        if queue.waiting.len() >= q.queue_length_limit {
            return (Arrival::Rejected(RejectReason::QueueFull), Some(tx));
        }
        if queue.waiting.is_empty() {
            queue.virtual_start = queue.virtual_start.max(clock);
        }
        queue.waiting_seats += seats;
        queue.waiting.push_back(Waiter {
            id,
            seats,
            flow,
            tx,
        });
        self.note_demand();
        (Arrival::Queued { queue: idx }, None)
    }

    /// Takes waiter `id` out of queue `queue` (it gave up); `false` when it
    /// is no longer waiting (it was dispatched meanwhile).
    pub fn withdraw(&mut self, queue: usize, id: u64) -> bool {
        let Some(q) = self.queues.get_mut(queue) else {
            return false;
        };
        match q.waiting.iter().position(|w| w.id == id) {
            Some(pos) => {
                if let Some(w) = q.waiting.remove(pos) {
                    q.waiting_seats -= w.seats;
                }
                true
            }
            None => false,
        }
    }

    /// A request holding `seats` (from `queue`) finished.
    pub fn release(&mut self, queue: Option<usize>, seats: u32) {
        self.seats_in_use = self.seats_in_use.saturating_sub(seats);
        if let Some(q) = queue.and_then(|q| self.queues.get_mut(q)) {
            q.executing_seats = q.executing_seats.saturating_sub(seats);
        }
    }

    /// Dispatches waiting requests while seats allow, fairest queue first;
    /// returns the (queue, seats) of each request told to run.
    pub fn dispatch(&mut self) -> Vec<(usize, u32, u64)> {
        let mut out = Vec::new();
        loop {
            let next = self
                .queues
                .iter()
                .enumerate()
                .filter(|(_, q)| !q.waiting.is_empty())
                .min_by_key(|(i, q)| (q.virtual_start, *i))
                .map(|(i, _)| i);
            let Some(idx) = next else { break };
            let seats = self.queues[idx]
                .waiting
                .front()
                .map(|w| w.seats)
                .unwrap_or(1);
            if !self.fits(seats) {
                break;
            }
            let queue = &mut self.queues[idx];
            let Some(w) = queue.waiting.pop_front() else {
                break;
            };
            queue.waiting_seats -= w.seats;
            self.clock = self.clock.max(queue.virtual_start);
            queue.virtual_start += u64::from(w.seats);
            if w.tx.send(idx).is_ok() {
                queue.executing_seats += w.seats;
                self.seats_in_use += w.seats;
                out.push((idx, w.seats, w.id));
            }
        }
        out
    }

    /// Moves the waiters into a set with new parameters (a configuration
    /// change); executing requests keep their seats in the level's count.
    pub fn reshape(&mut self, queuing: Option<Queuing>, limit: u32) {
        self.limit = limit;
        if queuing == self.queuing {
            return;
        }
        let mut next = QueueSet::new(queuing, limit);
        next.seats_in_use = self.seats_in_use;
        next.demand_high_water = self.demand_high_water;
        let waiters: Vec<Waiter> = self
            .queues
            .iter_mut()
            .flat_map(|q| q.waiting.drain(..))
            .collect();
        for w in waiters {
            match next.queuing {
                Some(q) => {
                    let idx = next.choose(w.flow, q.hand_size);
                    let queue = &mut next.queues[idx];
                    queue.waiting_seats += w.seats;
                    queue.waiting.push_back(w);
                }
                // No queues any more: the waiters are told to run (they
                // were admitted under the old rules) and count as executing.
                None => {
                    if w.tx.send(usize::MAX).is_ok() {
                        next.seats_in_use += w.seats;
                    }
                }
            }
        }
        *self = next;
    }

    /// The queue waiter `id` sits in now (it may have moved on reshape).
    pub fn queue_of(&self, id: u64) -> Option<usize> {
        self.queues
            .iter()
            .position(|q| q.waiting.iter().any(|w| w.id == id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queued(q: Option<Queuing>, limit: u32) -> QueueSet {
        QueueSet::new(q, limit)
    }

    const Q: Queuing = Queuing {
        queues: 64,
        hand_size: 6,
        queue_length_limit: 50,
    };

    #[test]
    fn reject_levels_reject_when_full() {
        let mut qs = queued(None, 2);
        for _ in 0..2 {
            let (tx, _rx) = oneshot::channel();
            assert!(matches!(
                qs.arrive(1, 1, 7, tx).0,
                Arrival::Dispatched { .. }
            ));
        }
        let (tx, _rx) = oneshot::channel();
        assert!(matches!(
            qs.arrive(3, 1, 7, tx).0,
            Arrival::Rejected(RejectReason::ConcurrencyLimit)
        ));
        qs.release(None, 1);
        let (tx, _rx) = oneshot::channel();
        assert!(matches!(
            qs.arrive(4, 1, 7, tx).0,
            Arrival::Dispatched { .. }
        ));
    }

    #[test]
    fn one_heavy_flow_cannot_starve_another() {
        let mut qs = queued(Some(Q), 1);
        let (tx, _rx0) = oneshot::channel();
        let Arrival::Dispatched { queue } = qs.arrive(0, 1, 1, tx).0 else {
            panic!("first runs")
        };
        // The heavy flow queues many; a light flow queues one afterwards.
        let mut rxs = Vec::new();
        for id in 1..=40 {
            let (tx, rx) = oneshot::channel();
            assert!(matches!(qs.arrive(id, 1, 1, tx).0, Arrival::Queued { .. }));
            rxs.push(rx);
        }
        let (tx, mut light) = oneshot::channel();
        assert!(matches!(
            qs.arrive(100, 1, 0xdead_beef_cafe, tx).0,
            Arrival::Queued { .. }
        ));
        // Within a few dispatches the light flow's request runs.
        let mut current = queue;
        for _ in 0..8 {
            qs.release(current, 1);
            let d = qs.dispatch();
            assert_eq!(d.len(), 1);
            current = Some(d[0].0);
            if light.try_recv().is_ok() {
                return;
            }
        }
        panic!("the light flow waited behind the heavy one");
    }

    #[test]
    fn full_queues_reject_and_withdrawn_waiters_leave() {
        let q = Queuing {
            queues: 1,
            hand_size: 1,
            queue_length_limit: 2,
        };
        let mut qs = queued(Some(q), 1);
        let (tx, _r) = oneshot::channel();
        assert!(matches!(
            qs.arrive(0, 1, 1, tx).0,
            Arrival::Dispatched { .. }
        ));
        let (tx, _r1) = oneshot::channel();
        assert!(matches!(
            qs.arrive(1, 1, 1, tx).0,
            Arrival::Queued { queue: 0 }
        ));
        let (tx, _r2) = oneshot::channel();
        assert!(matches!(
            qs.arrive(2, 1, 1, tx).0,
            Arrival::Queued { queue: 0 }
        ));
        let (tx, _r3) = oneshot::channel();
        assert!(matches!(
            qs.arrive(3, 1, 1, tx).0,
            Arrival::Rejected(RejectReason::QueueFull)
        ));
        assert!(qs.withdraw(0, 1));
        assert!(!qs.withdraw(0, 1));
        assert_eq!(qs.waiting(), 1);
    }

    #[test]
    fn hands_are_distinct_queues() {
        let qs = queued(Some(Q), 1);
        for flow in [0_u64, 1, 12345, u64::MAX] {
            let q = qs.choose(flow, 6);
            assert!(q < 64);
        }
    }
}
