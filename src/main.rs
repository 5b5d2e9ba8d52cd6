//! The `syscost` binary: everything lives in the library.

fn main() -> std::process::ExitCode {
    // The helper that proc.exec and proc.spawn start: exit at once, before anything else.
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == syscost::os::spawn::HELPER_ARG)
    {
        return std::process::ExitCode::SUCCESS;
    }
    syscost::cli::main()
}
