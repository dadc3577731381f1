//! AFL++ target: a model file (TOML if the first byte is even, JSON otherwise, the rest of the
//! input is the text) parsed, built through the element registry and validated, as
//! `saltus run` does before preparing the integrator.

fn main() {
    saltus_elements::link();
    afl::fuzz!(|data: &[u8]| {
        let Some((&selector, rest)) = data.split_first() else {
            return;
        };
        let Ok(text) = std::str::from_utf8(rest) else {
            return;
        };
        let format = if selector % 2 == 0 {
            saltus_io::Format::Toml
        } else {
            saltus_io::Format::Json
        };
        if let Ok(file) = saltus_io::parse_str(text, format, "afl.model") {
            let _ = file.model.validate();
        }
    });
}
