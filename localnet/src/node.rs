//! The thread that owns the chain. Slots advance with wall time; RPC handlers send it work
//! and await the answer.

use {
    crate::{chain::MarketSetup, ledger::Ledger, pubsub::Subscriptions},
    solana_keypair::Keypair,
    std::{
        sync::mpsc,
        time::{Duration, Instant},
    },
    tokio::sync::oneshot,
};

/// What the chain thread owns: the ledger, and the development keys of its market.
pub struct NodeState {
    pub ledger: Ledger,
    pub market: MarketSetup,
    /// Pays `requestAirdrop`.
    pub faucet: Keypair,
    pub pubsub: Subscriptions,
}

impl NodeState {
    /// Tells subscribers what the ledger did since the last call.
    fn publish(&mut self) {
        let events = self.ledger.take_events();
        if !events.is_empty() {
            self.pubsub.publish(&self.ledger, events);
        }
    }
}

type Job = Box<dyn FnOnce(&mut NodeState) + Send>;

#[derive(Clone)]
pub struct Node {
    jobs: mpsc::Sender<Job>,
}

impl Node {
    /// Starts the chain thread. `build` runs on it, since the SVM never leaves its thread.
    pub fn start(build: impl FnOnce() -> NodeState + Send + 'static, slot: Duration) -> Node {
        let (jobs, queue) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("chain".into())
            .spawn(move || {
                let mut state = build();
                let mut next_slot_at = Instant::now() + slot;
                loop {
                    let now = Instant::now();
                    if now >= next_slot_at {
                        state.ledger.advance_slot();
                        state.publish();
                        next_slot_at += slot;
                        continue;
                    }
                    match queue.recv_timeout(next_slot_at - now) {
                        Ok(job) => {
                            job(&mut state);
                            state.publish();
                        }
                        Err(mpsc::RecvTimeoutError::Timeout) => {}
                        Err(mpsc::RecvTimeoutError::Disconnected) => break,
                    }
                }
            })
            .expect("spawn the chain thread");
        Node { jobs }
    }

    /// Runs `work` on the chain thread and returns its result.
    pub async fn call<R: Send + 'static>(&self, work: impl FnOnce(&mut NodeState) -> R + Send + 'static) -> R {
        let (answer, answered) = oneshot::channel();
        let job: Job = Box::new(move |state| {
            let _ = answer.send(work(state));
        });
        self.jobs.send(job).expect("the chain thread is running");
        answered.await.expect("the chain thread answers every job")
    }
}
