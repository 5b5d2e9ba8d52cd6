//! The terminal's width, for text that must not wrap (the results table, the progress
//! line). It asks the kernel (TIOCGWINSZ) about a descriptor that is a terminal, and
//! otherwise reads `COLUMNS`; it must not print or decide a layout.

use std::os::fd::AsFd;

/// The width assumed when standard output is not a terminal and `COLUMNS` says
/// nothing: the 100 columns the table is designed for.
pub const DEFAULT_WIDTH: usize = 100;

/// The number of columns of the terminal `fd` is, if it is one with a known size.
pub fn columns_of(fd: impl AsFd) -> Option<usize> {
    let ws = rustix::termios::tcgetwinsize(fd).ok()?;
    (ws.ws_col > 0).then_some(ws.ws_col as usize)
}

/// `COLUMNS` from the environment, when it holds a sensible width (20 or more).
pub fn columns_from_env() -> Option<usize> {
    std::env::var("COLUMNS")
        .ok()?
        .trim()
        .parse()
        .ok()
        .filter(|&w: &usize| w >= 20)
}

/// The width text written to standard output should keep within: the terminal's, else
/// `COLUMNS`, else [`DEFAULT_WIDTH`].
pub fn stdout_width() -> usize {
    columns_of(std::io::stdout())
        .or_else(columns_from_env)
        .unwrap_or(DEFAULT_WIDTH)
}

/// The width for text written to a file: `COLUMNS`, else [`DEFAULT_WIDTH`].
pub fn file_width() -> usize {
    columns_from_env().unwrap_or(DEFAULT_WIDTH)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_pipe_is_not_a_terminal() {
        let (r, _w) = rustix::pipe::pipe().unwrap();
        assert_eq!(super::columns_of(&r), None);
    }
}
