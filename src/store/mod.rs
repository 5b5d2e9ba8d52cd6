//! What syscost knows about the machine it runs on. Today: the host facts read from
//! /proc and /sys ([`host`]); later, the history of runs.

pub mod host;
