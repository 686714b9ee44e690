//! The scanner against serde_json on the same text: whatever it accepts,
//! serde_json accepts with the same meaning.

use std::borrow::Cow;

use proptest::prelude::*;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

use super::{Bail, Scanner, is_json_number};

fn skip_all(text: &str) -> Result<(), Bail> {
    let mut s = Scanner::new(text);
    s.skip()?;
    s.end()
}

#[test]
fn skips_what_serde_json_skips() {
    let ok = [
        "0",
        "-0.5e+10",
        "12E3",
        "true",
        " null ",
        r#"{"a":[1,2,{"b":"\u00e9\n"}],"c":{}, "d" : [ ] }"#,
        r#"[[[[[]]]],{"x":{"y":{"z":[false]}}}]"#,
        r#"{"\ud800":"\udc00 lone surrogates are skipped"}"#,
    ];
    for text in ok {
        assert_eq!(skip_all(text), Ok(()), "{text}");
        assert!(serde_json::from_str::<IgnoredAny>(text).is_ok(), "{text}");
    }
    let bad = [
        "",
        "01",
        "-",
        "1.",
        "1e",
        ".5",
        "tru",
        "nul",
        "[1,]",
        "{\"a\":1,}",
        "{\"a\" 1}",
        "{1:2}",
        "[1 2]",
        "[}",
        "{]",
        "[1",
        "\"\t\"",
        "+1",
        "[1]x",
    ];
    for text in bad {
        assert_eq!(skip_all(text), Err(Bail), "{text:?}");
        assert!(
            serde_json::from_str::<IgnoredAny>(text).is_err(),
            "{text:?}"
        );
    }
}

#[test]
fn deep_values_bail_rather_than_recurse() {
    let deep = format!("{}{}", "[".repeat(100), "]".repeat(100));
    assert_eq!(skip_all(&deep), Err(Bail));
    let fine = format!("{}{}", "[".repeat(64), "]".repeat(64));
    assert_eq!(skip_all(&fine), Ok(()));
}

#[test]
fn strings_decode_as_serde_json_decodes_them() {
    for text in [
        r#""plain""#,
        r#""a\"b\\c\/d\b\f\n\r\t""#,
        r#""\u00e9\u20ac\ud83d\ude00""#,
        r#""\u0000""#,
    ] {
        let ours = Scanner::new(text).string();
        let theirs: Cow<'_, str> = serde_json::from_str(text).unwrap();
        assert_eq!(ours, Ok(theirs), "{text}");
    }
    for text in [r#""\ud800""#, r#""\udc00x""#, r#""\ud800\u0041""#] {
        assert_eq!(Scanner::new(text).string(), Err(Bail), "{text}");
        assert!(
            serde_json::from_str::<Cow<'_, str>>(text).is_err(),
            "{text}"
        );
    }
}

/// Texts near JSON: fragments of it put together, so that most are
/// almost valid.
fn jsonish() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("{".to_string()),
        Just("}".to_string()),
        Just("[".to_string()),
        Just("]".to_string()),
        Just(",".to_string()),
        Just(":".to_string()),
        Just(" ".to_string()),
        Just("\n".to_string()),
        Just("\"k\"".to_string()),
        Just("\"a\\\"b\\n\"".to_string()),
        Just("\"\\ud800\"".to_string()),
        Just("\"\\u00e9\"".to_string()),
        Just("\"\\x\"".to_string()),
        Just("\"é\t\"".to_string()),
        Just("\"".to_string()),
        Just("\\".to_string()),
        Just("null".to_string()),
        Just("true".to_string()),
        Just("fals".to_string()),
        Just("-0".to_string()),
        Just("12.5e-3".to_string()),
        Just("01".to_string()),
        Just("1.".to_string()),
        "[a-z ]{0,80}".prop_map(|s| format!("\"{s}\"")),
    ];
    proptest::collection::vec(piece, 0..40).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    /// A JSON number exactly when serde_json reads the text as one value
    /// (no blanks, and no literal can be made of these characters).
    #[test]
    fn numbers_are_what_serde_json_reads(text in "[-+0-9.eEinfaN]{0,8}") {
        let serde = serde_json::from_str::<&RawValue>(&text).is_ok();
        prop_assert_eq!(is_json_number(&text), serde, "{}", text);
    }

    /// Skipping: the same verdict as serde_json, and `raw` gives the text
    /// serde_json's `RawValue` holds.
    #[test]
    fn skip_and_raw_agree_with_serde_json(text in jsonish()) {
        let theirs = serde_json::from_str::<IgnoredAny>(&text).is_ok();
        let ours = skip_all(&text);
        if ours.is_ok() {
            prop_assert!(theirs, "accepted what serde_json refuses: {text:?}");
            let mut s = Scanner::new(&text);
            let raw = s.raw().unwrap();
            let theirs: &RawValue = serde_json::from_str(&text).unwrap();
            prop_assert_eq!(raw, theirs.get());
        } else if theirs {
            // Only nesting past the skipper's word may bail on valid JSON.
            prop_assert!(text.matches(['[', '{']).count() > 64, "bailed on {text:?}");
        }
    }

    /// Decoding: the same string as serde_json, or a bail where it fails.
    #[test]
    fn strings_agree_with_serde_json(text in jsonish()) {
        let theirs = serde_json::from_str::<Cow<'_, str>>(&text);
        let mut s = Scanner::new(&text);
        if let Ok(ours) = s.string().and_then(|v| s.end().map(|()| v)) {
            prop_assert_eq!(Some(ours), theirs.ok());
        }
    }
}
