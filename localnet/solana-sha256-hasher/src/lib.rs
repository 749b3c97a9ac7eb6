//! SHA-256 with the API of solana-sha256-hasher 2.3.
//!
//! On SBF, `hashv` is the `sol_sha256` syscall, and the incremental `Hasher` (with the `sha2`
//! feature) hashes in the program. On the host everything is computed with `sha2`, and each
//! digest is reported to the observer installed with `set_digest_observer`: localnet charges a
//! natively running program for what SBF would have metered. `solana-pubkey` derives a program
//! address on the host by streaming the seeds, the program id and a fixed marker through
//! `Hasher`; that shape is reported as `Digest::ProgramAddress`, the work the
//! `sol_create_program_address` syscall does on SBF.

#![cfg_attr(target_os = "solana", no_std)]

use solana_hash::{Hash, HASH_BYTES};

#[cfg(target_os = "solana")]
pub use solana_define_syscall::definitions::sol_sha256;

#[cfg(not(target_os = "solana"))]
pub use host::{set_digest_observer, Digest};

/// An incremental SHA-256.
#[cfg(any(feature = "sha2", not(target_os = "solana")))]
#[derive(Clone, Default)]
pub struct Hasher {
    state: sha2::Sha256,
    #[cfg(not(target_os = "solana"))]
    stream: host::Stream,
}

#[cfg(any(feature = "sha2", not(target_os = "solana")))]
impl Hasher {
    pub fn hash(&mut self, val: &[u8]) {
        sha2::Digest::update(&mut self.state, val);
        #[cfg(not(target_os = "solana"))]
        self.stream.record(val);
    }

    pub fn hashv(&mut self, vals: &[&[u8]]) {
        vals.iter().for_each(|val| self.hash(val));
    }

    pub fn result(self) -> Hash {
        #[cfg(not(target_os = "solana"))]
        self.stream.report();
        let bytes: [u8; HASH_BYTES] = sha2::Digest::finalize(self.state).into();
        Hash::new_from_array(bytes)
    }
}

/// The SHA-256 of the concatenation of `vals`.
pub fn hashv(vals: &[&[u8]]) -> Hash {
    #[cfg(not(target_os = "solana"))]
    {
        host::report(Digest::Slices(vals));
        let mut state = <sha2::Sha256 as sha2::Digest>::new();
        vals.iter().for_each(|val| sha2::Digest::update(&mut state, val));
        let bytes: [u8; HASH_BYTES] = sha2::Digest::finalize(state).into();
        Hash::new_from_array(bytes)
    }
    #[cfg(target_os = "solana")]
    {
        let mut bytes = [0u8; HASH_BYTES];
        // SAFETY: `vals` is a slice of slices, the layout the syscall reads, and `bytes` has
        // room for the digest it writes.
        unsafe {
            sol_sha256(vals.as_ptr() as *const u8, vals.len() as u64, bytes.as_mut_ptr());
        }
        Hash::new_from_array(bytes)
    }
}

/// The SHA-256 of `val`.
pub fn hash(val: &[u8]) -> Hash {
    hashv(&[val])
}

/// The SHA-256 of `id`'s bytes followed by `val`.
#[deprecated(since = "2.3.0", note = "Use `hashv(&[hash.as_ref(), val])` directly")]
pub fn extend_and_hash(id: &Hash, val: &[u8]) -> Hash {
    hashv(&[id.as_ref(), val])
}

#[cfg(not(target_os = "solana"))]
mod host {
    use std::sync::OnceLock;

    /// What `Pubkey::create_program_address` hashes last, after the seeds and the program id.
    const PROGRAM_ADDRESS_MARKER: &[u8] = b"ProgramDerivedAddress";
    /// Bytes of a program id, hashed just before the marker.
    const PROGRAM_ID_BYTES: u64 = 32;

    /// A digest computed on the host, as SBF would have paid for it.
    #[derive(Clone, Copy, Debug)]
    pub enum Digest<'a> {
        /// `hashv`/`hash`: one `sol_sha256` syscall over these slices.
        Slices(&'a [&'a [u8]]),
        /// A `Hasher` ending with a program id and the program-address marker: one try of
        /// `create_program_address`.
        ProgramAddress,
        /// Any other use of `Hasher`: `slices` updates of `bytes` bytes in all.
        Stream { slices: u64, bytes: u64 },
    }

    static OBSERVER: OnceLock<fn(Digest<'_>)> = OnceLock::new();

    /// Sends every digest computed on the host from now on to `observer`. One observer per
    /// process: a second call keeps the first and returns false.
    pub fn set_digest_observer(observer: fn(Digest<'_>)) -> bool {
        OBSERVER.set(observer).is_ok()
    }

    pub(crate) fn report(digest: Digest<'_>) {
        if let Some(observer) = OBSERVER.get() {
            observer(digest);
        }
    }

    /// The shape of what a `Hasher` was fed: enough to tell a program-address derivation.
    #[derive(Clone, Default)]
    pub(crate) struct Stream {
        slices: u64,
        bytes: u64,
        previous_len: u64,
        ends_with_marker: bool,
    }

    impl Stream {
        pub(crate) fn record(&mut self, val: &[u8]) {
            let len = val.len() as u64;
            self.slices = self.slices.saturating_add(1);
            self.bytes = self.bytes.saturating_add(len);
            self.ends_with_marker = val == PROGRAM_ADDRESS_MARKER && self.previous_len == PROGRAM_ID_BYTES;
            self.previous_len = len;
        }

        pub(crate) fn report(&self) {
            report(if self.ends_with_marker {
                Digest::ProgramAddress
            } else {
                Digest::Stream {
                    slices: self.slices,
                    bytes: self.bytes,
                }
            });
        }
    }
}
