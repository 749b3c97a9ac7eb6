pub mod agent;
pub mod dispute;
pub mod escrow;
pub mod market;
pub mod receipt_log;
pub mod subscription;

pub use agent::*;
pub use dispute::*;
pub use escrow::*;
pub use market::*;
pub use receipt_log::*;
pub use subscription::*;
