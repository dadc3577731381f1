//! The `saltus` program: the whole command line is [`saltus::cli::main`].

fn main() -> std::process::ExitCode {
    saltus::cli::main()
}
