//! sumac policy variants (`--policy`): pools built with some of the scheduler's
//! switchable mechanisms (`sumac::Mechanism`) turned off, run side by side with the
//! default pool in one process. Each variant is an implementation row of its own,
//! labelled `sumac[-name+-name]`; the default variant keeps the plain label `sumac`.
//!
//! Grammar of the flag: a comma-separated list of items, each `default` (every
//! mechanism on), `-name[+-name...]` (those mechanisms off), or `each` (the default,
//! then every mechanism off on its own, one variant each). Duplicates are dropped.

use std::fmt;

use sumac::Mechanism;

use crate::output::FlagError;

/// One sumac configuration: the mechanisms switched off (in the order named).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Policy {
    off: Vec<Mechanism>,
}

impl Policy {
    /// The pool sumac builds by default (only `SUMAC_MECHANISMS` applies).
    pub fn is_default(&self) -> bool {
        self.off.is_empty()
    }

    /// A policy with `off` switched off.
    pub fn without(off: Vec<Mechanism>) -> Policy {
        Policy { off }
    }

    /// The row label: `sumac` for the default, `sumac[-rescue+-age-rule]` otherwise.
    pub fn label(&self) -> String {
        if self.is_default() {
            "sumac".to_string()
        } else {
            format!("sumac[{self}]")
        }
    }

    /// A builder of `threads` threads with this policy's mechanisms switched off
    /// (`ThreadPoolBuilder::mechanism` overrides `SUMAC_MECHANISMS`).
    pub fn builder(&self, threads: usize) -> sumac::ThreadPoolBuilder {
        self.off.iter().fold(
            sumac::ThreadPoolBuilder::new().num_threads(threads),
            |builder, &m| builder.mechanism(m, false),
        )
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_default() {
            return f.write_str("default");
        }
        for (i, m) in self.off.iter().enumerate() {
            if i > 0 {
                f.write_str("+")?;
            }
            write!(f, "-{}", m.name())?;
        }
        Ok(())
    }
}

/// The mechanism names, for error messages.
fn valid_names() -> String {
    let names: Vec<&str> = Mechanism::ALL.iter().map(|m| m.name()).collect();
    names.join(", ")
}

/// Parses `--policy LIST` (see the module documentation).
pub fn parse_policies(text: &str) -> Result<Vec<Policy>, FlagError> {
    let items: Vec<&str> = text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if items.is_empty() {
        return Err(FlagError("--policy: the list is empty".into()));
    }
    let mut out: Vec<Policy> = Vec::new();
    let mut push = |p: Policy| {
        if !out.contains(&p) {
            out.push(p);
        }
    };
    for item in items {
        match item {
            "default" => push(Policy::default()),
            "each" => {
                push(Policy::default());
                for m in Mechanism::ALL {
                    push(Policy::without(vec![m]));
                }
            }
            _ => {
                let mut off = Vec::new();
                for part in item.split('+') {
                    let name = part.strip_prefix('-').ok_or_else(|| {
                        FlagError(format!(
                            "--policy: '{item}' is not `default`, `each` or `-name[+-name...]` (mechanisms: {})",
                            valid_names()
                        ))
                    })?;
                    let m: Mechanism = name.parse().map_err(|_| {
                        FlagError(format!(
                            "--policy: unknown mechanism '{name}' (expected one of {})",
                            valid_names()
                        ))
                    })?;
                    if !off.contains(&m) {
                        off.push(m);
                    }
                }
                push(Policy::without(off));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_parse_into_labelled_variants() {
        let p = parse_policies("default, -rescue,-age-rule+-idle-spin,default").unwrap();
        let labels: Vec<String> = p.iter().map(Policy::label).collect();
        assert_eq!(
            labels,
            ["sumac", "sumac[-rescue]", "sumac[-age-rule+-idle-spin]"]
        );
        let each = parse_policies("each").unwrap();
        assert_eq!(each.len(), 1 + Mechanism::ALL.len());
        assert!(each[0].is_default());
    }

    #[test]
    fn bad_policies_name_the_flag_and_the_valid_mechanisms() {
        for bad in ["", ",", "rescue", "-nope", "-rescue+age-rule"] {
            let e = parse_policies(bad).unwrap_err().0;
            assert!(e.starts_with("--policy:"), "{e}");
        }
        assert!(parse_policies("-nope").unwrap_err().0.contains("age-rule"));
    }

    #[test]
    fn a_policy_builds_a_pool() {
        let p = &parse_policies("-guests+-rescue").unwrap()[0];
        let pool = p.builder(2).build().unwrap();
        assert_eq!(pool.current_num_threads(), 2);
    }
}
