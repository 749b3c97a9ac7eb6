//! `msg!` and `sol_log`, API-compatible with solana-msg 2.2.
//!
//! On SBF they make the `sol_log_` syscall. On the host, upstream prints to stdout, which loses
//! a natively running program's logs; here they go to the sink the runtime installed for the
//! running instruction (see `localnet::native`), and to stdout only outside of one.

/// Logs a message: `msg!("text")` or `msg!("format {}", args)`.
#[macro_export]
macro_rules! msg {
    ($msg:expr) => {
        $crate::sol_log($msg)
    };
    ($($arg:tt)*) => ($crate::sol_log(&format!($($arg)*)));
}

/// Logs a string.
#[inline]
pub fn sol_log(message: &str) {
    #[cfg(target_os = "solana")]
    unsafe {
        solana_define_syscall::definitions::sol_log_(message.as_ptr(), message.len() as u64);
    }

    #[cfg(not(target_os = "solana"))]
    host::log(message);
}

#[cfg(not(target_os = "solana"))]
pub use host::set_log_sink;

#[cfg(not(target_os = "solana"))]
mod host {
    use std::cell::Cell;

    thread_local! {
        static SINK: Cell<Option<fn(&str)>> = const { Cell::new(None) };
    }

    /// Sends this thread's logs to `sink` (stdout when `None`); returns the previous sink.
    pub fn set_log_sink(sink: Option<fn(&str)>) -> Option<fn(&str)> {
        SINK.replace(sink)
    }

    pub(crate) fn log(message: &str) {
        match SINK.get() {
            Some(sink) => sink(message),
            None => println!("{message}"),
        }
    }
}
