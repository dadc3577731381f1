//! Unit tests of the model-file reader.

use super::*;

#[test]
fn json_scanner_offsets() {
    let text = "{\n \"a\": [1, {\"b\\\"\": 2}],\n \"c\": \"x,}\" }";
    let mut s = JsonScanner {
        text,
        bytes: text.as_bytes(),
        pos: 0,
        duplicate: None,
    };
    let spans = s.value().unwrap();
    let cx = Cx {
        spans,
        ..Cx::new(text, "t.json")
    };
    assert_eq!(cx.line(&[key("a")]), Some(2));
    assert_eq!(cx.line(&[key("c")]), Some(3));
    let off = cx
        .spans
        .locate(&[key("a"), Seg::Index(1), key("b\"")])
        .unwrap();
    assert_eq!(&text[off..off + 5], "\"b\\\"\"");
}

#[test]
fn backticked_field() {
    assert_eq!(
        backticked("unknown field `colour`, expected one of `name`"),
        Some("colour".into())
    );
    assert_eq!(backticked("no field"), None);
}

#[test]
fn defaults_are_valid() {
    SimulationSettings::default().validate().unwrap();
}
