//! The spec's rule for ratios left out: "when you add an application, the platform splits 1.0
//! evenly over every client and server entry of every application in the configuration". Ours,
//! where some are given and some are not: the given ones keep their values and the ones left out
//! share what remains, `1 - sum(given)`, evenly. Either way all the ratios add up to 1.

use crate::placement::RATIO_SUM_TOLERANCE;
use engine::scenario::FieldError;

/// One component of an application that takes hosts from the shared budget.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DistributionEntry {
    /// Its ratio's field in the application's config (`prScalaRdmaInitiator`).
    pub field: &'static str,
    /// Its name in messages and in `rdmasim plan` (`initiator`).
    pub component: &'static str,
    /// The ratio, when the scenario gives it.
    pub ratio: Option<f64>,
}

/// The ratio of every entry of every application (`apps[i]` lists application `i`'s entries),
/// left-out ones filled in. The error's field is from the top of the scenario:
/// `applications[i].FIELD` for an entry, `applications` when the given ratios alone miss 1.
/// Applications without entries (all of them, even) need no ratios.
pub fn split_ratios(apps: &[Vec<DistributionEntry>]) -> Result<Vec<Vec<f64>>, FieldError> {
    let field = |i: usize, e: &DistributionEntry| format!("applications[{i}].{}", e.field);
    let mut given = 0.0;
    let mut left_out = Vec::new();
    for (i, entries) in apps.iter().enumerate() {
        for e in entries {
            match e.ratio {
                Some(r) if !(r > 0.0 && r <= 1.0) => {
                    return Err(FieldError::new(
                        field(i, e),
                        format!(
                            "{r}: a ratio must be above 0 and at most 1 (a ratio of 0 makes the configuration invalid)"
                        ),
                    ));
                }
                Some(r) => given += r,
                None => left_out.push((i, *e)),
            }
        }
    }
    let any = apps.iter().any(|e| !e.is_empty());
    let share = if left_out.is_empty() {
        if any && (given - 1.0).abs() > RATIO_SUM_TOLERANCE {
            return Err(FieldError::new(
                "applications",
                format!(
                    "the distribution ratios of all the applications add up to {given}, not 1: they share one budget of hosts, so change them until they sum to 1 (or leave some out: those left out share what remains evenly)"
                ),
            ));
        }
        0.0
    } else {
        let share = (1.0 - given) / left_out.len() as f64;
        if share <= RATIO_SUM_TOLERANCE {
            let (i, e) = left_out[0];
            return Err(FieldError::new(
                field(i, &e),
                format!(
                    "left out, it would share what the given ratios leave of 1, but they already add up to {given}: give it a ratio and lower the others so that all add up to 1"
                ),
            ));
        }
        share
    };
    Ok(apps
        .iter()
        .map(|entries| entries.iter().map(|e| e.ratio.unwrap_or(share)).collect())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scala(i: Option<f64>, r: Option<f64>) -> Vec<DistributionEntry> {
        vec![
            DistributionEntry {
                field: "prScalaRdmaInitiator",
                component: "initiator",
                ratio: i,
            },
            DistributionEntry {
                field: "prScalaRdmaResponder",
                component: "responder",
                ratio: r,
            },
        ]
    }

    #[test]
    fn one_application_on_its_own_gets_half_and_half() {
        assert_eq!(split_ratios(&[scala(None, None)]), Ok(vec![vec![0.5, 0.5]]));
    }

    #[test]
    fn two_applications_without_ratios_get_a_quarter_each() {
        // 1.0 over 4 entries.
        assert_eq!(
            split_ratios(&[scala(None, None), scala(None, None)]),
            Ok(vec![vec![0.25, 0.25], vec![0.25, 0.25]])
        );
    }

    #[test]
    fn the_ones_left_out_share_what_the_given_ones_leave() {
        // 0.4 given; the three left out share 0.6: 0.2 each.
        let got = split_ratios(&[scala(Some(0.4), None), scala(None, None)]).unwrap();
        assert_eq!(got[0][0], 0.4);
        for r in [got[0][1], got[1][0], got[1][1]] {
            assert!((r - 0.2).abs() < 1e-12, "{r}");
        }
        // Entries without ratios (an application that names its hosts) take no share.
        assert_eq!(
            split_ratios(&[vec![], scala(Some(0.75), None)]),
            Ok(vec![vec![], vec![0.75, 0.25]])
        );
        // No entries at all (only such applications): nothing to split.
        assert_eq!(split_ratios(&[vec![]]), Ok(vec![vec![]]));
    }

    #[test]
    fn totals_other_than_one_are_refused_naming_the_field() {
        let e = split_ratios(&[scala(Some(0.7), Some(0.5))]).unwrap_err();
        assert_eq!(e.field, "applications");
        assert!(e.message.contains("1.2"), "{}", e.message);
        let e = split_ratios(&[scala(Some(0.5), Some(0.25))]).unwrap_err();
        assert_eq!(e.field, "applications");
        // Nothing left for the ones left out: the first of them is named.
        let e = split_ratios(&[scala(Some(0.5), Some(0.5)), scala(None, None)]).unwrap_err();
        assert_eq!(e.field, "applications[1].prScalaRdmaInitiator");
        let e = split_ratios(&[scala(Some(1.0), None)]).unwrap_err();
        assert_eq!(e.field, "applications[0].prScalaRdmaResponder");
        // A ratio of 0 stays invalid.
        let e = split_ratios(&[scala(Some(0.0), None)]).unwrap_err();
        assert_eq!(e.field, "applications[0].prScalaRdmaInitiator");
        assert!(e.message.contains("a ratio of 0 makes the configuration invalid"));
    }
}
