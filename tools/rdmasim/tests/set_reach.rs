//! `--set` reaches a field under structs the file leaves out: it writes the structs around the
//! field, and the loader checks the result as it checks a file (issue #14's fuzz finding).

mod common;

use common::{rdmasim, scenario, stderr};
use std::process::Output;

/// `validate scenarios/star.ron --set ...`.
fn validate(sets: &[&str]) -> Output {
    let star = scenario("star");
    let mut args = vec!["validate", star.to_str().expect("utf-8")];
    for s in sets {
        args.extend(["--set", s]);
    }
    rdmasim(&args)
}

#[test]
fn a_field_under_a_struct_the_file_leaves_out_is_set() {
    // star.ron has no `switch` and `nic: RoceNic(())`: both paths go through absent structs.
    for set in [
        r#"switch.PfcXoff="300KiB""#,
        r#"nic.EgressBufferManager.BufferSize="4MiB""#,
    ] {
        let o = validate(&[set]);
        assert_eq!(o.status.code(), Some(0), "--set {set}: {}", stderr(&o));
    }
}

#[test]
fn the_value_set_under_an_absent_struct_is_the_one_checked() {
    // PfcXon must stay below PfcXoff (default 256 KiB): 300 KiB set through the absent `switch`
    // struct is refused, which shows the value reached the field rather than being dropped.
    let o = validate(&[r#"switch.PfcXon="300KiB""#]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("PfcXon"), "{}", stderr(&o));
    // Two fields of one absent struct land in the same struct: raising PfcXoff makes it valid.
    let o = validate(&[r#"switch.PfcXoff="512KiB""#, r#"switch.PfcXon="300KiB""#]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn an_unknown_field_under_an_absent_struct_is_refused_by_name() {
    let o = validate(&["switch.NoSuchKnob=1"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("NoSuchKnob"), "{}", stderr(&o));
    // Blamed on the argument (its path, column 1), not on a line of the rewritten file.
    assert!(
        stderr(&o).starts_with("<--set>:1:1: switch.NoSuchKnob:"),
        "{}",
        stderr(&o)
    );
}
