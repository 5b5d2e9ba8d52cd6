//! The `syscost` binary: everything lives in the library.

fn main() -> std::process::ExitCode {
    // The helper that proc.exec and proc.spawn start: exit at once, before anything else.
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == syscost::os::spawn::HELPER_ARG)
    {
        return std::process::ExitCode::SUCCESS;
    }
    // A worker measuring one benchmark for a run (see `session::worker`).
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .take(4)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if args
        .first()
        .is_some_and(|a| a == syscost::session::worker::WORKER_ARG)
    {
        return syscost::session::worker::serve(&args[1..]);
    }
    syscost::session::worker::enable_self_exec();
    syscost::cli::main()
}
