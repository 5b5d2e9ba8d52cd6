//! Message passing between two processes: the echo round trip of a message through one
//! transport and back (Nagy's VMS mailbox test, 1985: overhead and "bandwidth" over
//! message sizes 4 B..10 KB, at several priorities, single- and multi-user), and
//! one-way streaming bandwidth (lmbench's bw_pipe, bw_unix, bw_tcp).
//!
//! The measuring thread is the master; the slave is a forked child made in `prepare`
//! and reaped when the body is dropped. Socket paths and queue names are removed
//! before measuring starts, so no interruption can leave them behind; System V queues
//! are removed when dropped. Nothing here signals or re-prioritises a process it did
//! not create.

pub mod bw;
pub mod link;
pub mod lm;
pub mod priority;
pub mod rtt;
pub mod unix_self;

use crate::bench::Bench;

/// The family.
pub const BENCHES: &[&dyn Bench] = &[
    &rtt::RTT,
    &bw::BW,
    &super::shared::PIPE_SELF,
    &unix_self::UNIX_SELF,
    &lm::FIFO,
    &lm::SEM,
    &lm::FCNTL,
    &lm::CONNECT,
];

/// Megabytes (10^6 bytes) per second for `bytes` moved in `ns` nanoseconds.
pub(crate) fn mb_per_s(bytes: f64, ns: f64) -> f64 {
    bytes * 1e3 / ns
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bandwidth_is_bytes_per_microsecond() {
        assert_eq!(mb_per_s(8.0, 1000.0), 8.0);
        assert_eq!(mb_per_s(65536.0, 65536.0), 1000.0);
    }
}
