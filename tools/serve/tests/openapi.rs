//! The OpenAPI description (`openapi.json`) and the router hold the same routes: every route
//! served is described, every described route is served, and the ones the description marks
//! open (`security: []`) are exactly those that need no token.

use std::collections::BTreeSet;

#[test]
fn openapi_describes_exactly_the_routes_served() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/openapi.json")).expect("openapi.json");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("openapi.json is JSON");
    let mut described = BTreeSet::new();
    for (path, ops) in doc["paths"].as_object().expect("paths") {
        for (method, op) in ops.as_object().expect("operations") {
            let open = op
                .get("security")
                .and_then(|s| s.as_array())
                .is_some_and(|s| s.is_empty());
            described.insert((method.to_uppercase(), path.clone(), !open));
        }
    }
    let served: BTreeSet<_> = rdmasim_serve::route_table()
        .into_iter()
        .map(|r| (r.method.to_string(), r.path.to_string(), r.auth))
        .collect();
    let missing: Vec<_> = served.difference(&described).collect();
    let extra: Vec<_> = described.difference(&served).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "served but not described (or with other security): {missing:?}\ndescribed but not served: {extra:?}"
    );
}
