//! The local chain of Agent Market.
//!
//! No machine here can build SBF binaries, so programs are compiled for the host and run
//! natively inside LiteSVM as builtins (see `native`). Everything around them — signature
//! verification, blockhashes, fees, the SPL Token and Associated Token programs, the Ed25519
//! precompile — is the real runtime.

pub mod base58;
pub mod chain;
pub mod dev;
pub mod fees;
pub mod genesis;
pub mod heap;
pub mod history;
pub mod ledger;
pub mod market;
pub mod meter;
pub mod native;
pub mod node;
pub mod open_batch;
pub mod pubsub;
pub mod receipt_log;
pub mod rpc;
pub mod server;
pub mod store;
pub mod timing;

pub use litesvm::LiteSVM;
