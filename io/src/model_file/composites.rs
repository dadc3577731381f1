//! Composite entries (`[[beam_lines]]`, ...): top-level arrays whose entries a registered
//! [`CompositeKind`] expands into nodes and elements (the meshing belongs to the element
//! library; this module checks the entry's shape and name and locates its errors).

use super::build::*;
use super::spans::*;
use super::*;
pub(super) use saltus_core::registry::{composite_kind, composite_kinds};
use saltus_core::registry::{CompositeDef, CompositeKind};

/// Expand every entry of the composite array `v` (top-level key `kind.key`) into `model`,
/// appending the generated element definitions to `defs` and their names (with the line of the
/// entry's `name`) to `element_first`.
pub(super) fn expand_composites(
    kind: &CompositeKind,
    v: &Value,
    cx: &Cx,
    model: &mut Model,
    defs: &mut Vec<ElementDef>,
    element_first: &mut HashMap<String, Option<u32>>,
    element_paths: &mut HashMap<String, Vec<Seg>>,
) -> Result<(), IoError> {
    let Value::Array(entries) = v else {
        return Err(IoError::Structure {
            location: cx.loc(&[key(kind.key)]),
            message: format!(
                "`{}` must be an array of tables, found {}",
                kind.key,
                json_type(v)
            ),
        });
    };
    let mut entry_first: HashMap<String, usize> = HashMap::new();
    for (i, v) in entries.iter().enumerate() {
        let path = |parameter: Option<&str>| {
            let mut p = vec![key(kind.key), Seg::Index(i)];
            if let Some(k) = parameter {
                p.push(key(k));
            }
            p
        };
        let err = |entry: &str, parameter: Option<&str>, message: String| IoError::Composite {
            location: cx.loc(&path(parameter)),
            entry: format!("{} `{entry}`", kind.label),
            parameter: parameter.map(str::to_string),
            message,
        };
        let unnamed = format!("#{}", i + 1);
        let Some(obj) = v.as_object() else {
            return Err(err(
                &unnamed,
                None,
                format!(
                    "a {} entry must be a table, found {}",
                    kind.label,
                    json_type(v)
                ),
            ));
        };
        let name = match obj.get("name") {
            None => return Err(err(&unnamed, Some("name"), "missing required key".into())),
            Some(Value::String(s)) if s.is_empty() => {
                return Err(err(&unnamed, Some("name"), "must not be empty".into()))
            }
            Some(Value::String(s)) => s.clone(),
            Some(other) => {
                return Err(err(
                    &unnamed,
                    Some("name"),
                    format!("must be a string, found {}", json_type(other)),
                ))
            }
        };
        if let Some(&first) = entry_first.get(&name) {
            let first_line = cx.line(&[key(kind.key), Seg::Index(first), key("name")]);
            return Err(err(
                &name,
                Some("name"),
                format!(
                    "duplicate {} name{}",
                    kind.label,
                    first_line_suffix(&first_line)
                ),
            ));
        }
        let def = CompositeDef {
            name: name.clone(),
            parameters: obj.clone(),
        };
        let generated = (kind.expand)(&def, model)
            .map_err(|e| err(&name, e.parameter.as_deref(), e.message))?;
        let name_line = cx.line(&path(Some("name")));
        for d in generated {
            element_first.insert(d.name.clone(), name_line);
            element_paths.insert(d.name.clone(), path(None));
            defs.push(d);
        }
        entry_first.insert(name, i);
    }
    Ok(())
}
