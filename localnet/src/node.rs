//! The thread that owns the chain. Slots advance with wall time; RPC handlers send it work
//! and await the answer.

use {
    crate::{chain::MarketSetup, ledger::Ledger, pubsub::Subscriptions, store::Store},
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
    /// Where the ledger is saved, with `--ledger`.
    pub store: Option<Store>,
}

impl NodeState {
    /// Tells subscribers what the ledger did since the last call.
    fn publish(&mut self) {
        let events = self.ledger.take_events();
        if !events.is_empty() {
            self.pubsub.publish(&self.ledger, events);
        }
    }

    /// Saves the ledger when it has a store; a failure to save stops the node rather than
    /// letting it run on with state it would lose. Without a store the ledger's record of what
    /// changed since the last save is dropped all the same: it would otherwise grow with every
    /// account the node ever wrote.
    pub fn save(&mut self) {
        match &mut self.store {
            Some(store) => {
                if let Err(err) = store.save(&mut self.ledger) {
                    eprintln!("localnet: cannot save the ledger: {err}");
                    std::process::exit(1);
                }
            }
            None => self.ledger.mark_saved(),
        }
    }
}

type Job = Box<dyn FnOnce(&mut NodeState) + Send>;

#[derive(Clone)]
pub struct Node {
    jobs: mpsc::Sender<Job>,
}

impl Node {
    /// Starts the chain thread. `build` runs on it, since the SVM never leaves its thread; its
    /// error, if any, is returned here.
    pub fn start(
        build: impl FnOnce() -> Result<NodeState, String> + Send + 'static,
        slot: Duration,
    ) -> Result<Node, String> {
        let (jobs, queue) = mpsc::channel::<Job>();
        let (built, outcome) = mpsc::sync_channel::<Result<(), String>>(1);
        std::thread::Builder::new()
            .name("chain".into())
            .spawn(move || {
                let mut state = match build() {
                    Ok(state) => state,
                    Err(err) => {
                        let _ = built.send(Err(err));
                        return;
                    }
                };
                let _ = built.send(Ok(()));
                let mut next_slot_at = Instant::now() + slot;
                loop {
                    let now = Instant::now();
                    if now >= next_slot_at {
                        state.ledger.advance_slot();
                        state.publish();
                        state.save();
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
            .map_err(|err| format!("cannot start the chain thread: {err}"))?;
        outcome
            .recv()
            .map_err(|_| "the chain thread stopped while starting".to_string())??;
        Ok(Node { jobs })
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
