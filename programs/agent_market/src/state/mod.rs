pub mod agent;
pub mod dispute;
pub mod escrow;
pub mod market;
pub mod receipt;
pub mod subscription;

pub use agent::*;
pub use dispute::*;
pub use escrow::*;
pub use market::*;
pub use receipt::*;
pub use subscription::*;
