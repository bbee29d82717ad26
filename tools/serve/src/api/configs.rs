//! Configurations: a RON scenario, checked by the simulator's own loader, and the global
//! simulation parameters patched onto it as `--set` overrides.

use super::AppState;
use super::error::{ApiError, ok, parse_id, rejected};
use crate::db;
use crate::params::{self, BadParameter};
use axum::Json;
use axum::extract::rejection::{JsonRejection, StringRejection};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde_json::{Map, Value, json};

/// Checks `text` with `overrides` on the blocking pool (loading builds the fabric and the plan).
async fn check(s: &AppState, text: String, overrides: Vec<String>) -> Result<Result<(), crate::Rejection>, ApiError> {
    let checker = s.check.clone();
    tokio::task::spawn_blocking(move || checker.check(&text, &overrides))
        .await
        .map_err(ApiError::internal)
}

/// `POST /api/v1/configurations`: the body is the RON text.
pub async fn create(
    State(s): State<AppState>,
    body: Result<String, StringRejection>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let text = body.map_err(ApiError::rejection)?;
    check(&s, text.clone(), Vec::new()).await?.map_err(rejected)?;
    let id = s.db.call(move |c| db::insert_config(c, &text)).await?;
    Ok((StatusCode::CREATED, ok(json!({ "config_id": id }))))
}

async fn load(s: &AppState, id: &str) -> Result<db::ConfigRow, ApiError> {
    let id = parse_id(id, "configuration")?;
    s.db.call(move |c| db::get_config(c, id))
        .await?
        .ok_or_else(|| ApiError::not_found("configuration"))
}

/// The first parameter of `patch` that the loader refuses on its own, for an error that does not
/// name its field (a RON syntax error inside the value).
async fn blame(s: &AppState, c: &db::ConfigRow, patch: &Map<String, Value>) -> Result<Option<&'static str>, ApiError> {
    for (name, value) in patch.iter().filter(|(_, v)| !v.is_null()) {
        let one = Map::from_iter([(name.clone(), value.clone())]);
        let Ok(merged) = params::merge(&c.parameters, &one) else {
            continue;
        };
        if check(s, c.scenario.clone(), params::overrides(&merged)).await?.is_err() {
            return Ok(params::PARAMETERS.iter().copied().find(|p| p == name));
        }
    }
    Ok(None)
}

/// `GET /api/v1/configurations/{config_id}`.
pub async fn get(State(s): State<AppState>, Path(id): Path<String>) -> Result<Json<Value>, ApiError> {
    let c = load(&s, &id).await?;
    Ok(ok(json!({
        "config_id": c.id,
        "scenario": c.scenario,
        "parameters": c.parameters,
        "overrides": params::overrides(&c.parameters),
    })))
}

/// `PATCH /api/v1/configurations/{config_id}/parameters`: a JSON object of parameters; `null`
/// removes one. The whole scenario is loaded with the new values, as `rdmasim run --set` would.
pub async fn patch(
    State(s): State<AppState>,
    Path(id): Path<String>,
    body: Result<Json<Map<String, Value>>, JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    let Json(patch) = body.map_err(ApiError::rejection)?;
    let c = load(&s, &id).await?;
    let merged = params::merge(&c.parameters, &patch)
        .map_err(|BadParameter { parameter, message }| ApiError::bad_request(message).with("parameter", parameter))?;
    let overrides = params::overrides(&merged);
    if let Err(r) = check(&s, c.scenario.clone(), overrides.clone()).await? {
        let mut parameter = r.field.as_deref().and_then(params::parameter_of);
        if parameter.is_none() {
            parameter = blame(&s, &c, &patch).await?;
        }
        let mut e = rejected(r);
        if let Some(p) = parameter {
            e = e.with("parameter", p);
        }
        return Err(e);
    }
    let (old, new, cid) = (c.parameters, merged.clone(), c.id);
    let stored = s.db.call(move |conn| db::set_parameters(conn, cid, &old, &new)).await?;
    if !stored {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "the parameters changed meanwhile: read them and patch again",
        ));
    }
    Ok(ok(json!({
        "config_id": cid,
        "parameters": merged,
        "overrides": overrides,
    })))
}
