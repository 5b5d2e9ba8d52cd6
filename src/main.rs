//! The `syscost` binary: everything lives in the library.

fn main() -> std::process::ExitCode {
    syscost::cli::main()
}
