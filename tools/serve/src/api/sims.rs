//! Simulations: started from a configuration (a copy of its scenario and parameters, so a later
//! patch does not change it), read with their progress, cancelled.

use super::AppState;
use super::error::{ApiError, ok, parse_id};
use crate::db::{self, Status};
use crate::params;
use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde_json::{Value, json};

/// The body of `POST /api/v1/simulations`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Start {
    config_id: i64,
}

/// `POST /api/v1/simulations`: queues a run of the configuration.
pub async fn create(
    State(s): State<AppState>,
    body: Result<Json<Start>, JsonRejection>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let Json(Start { config_id }) = body.map_err(ApiError::rejection)?;
    let id =
        s.db.call(move |c| {
            let Some(config) = db::get_config(c, config_id)? else {
                return Ok(None);
            };
            let overrides = params::overrides(&config.parameters);
            db::insert_sim(c, &config, &overrides).map(Some)
        })
        .await?
        .ok_or_else(|| ApiError::not_found("configuration"))?;
    s.runs.wake.notify_one();
    Ok((StatusCode::CREATED, ok(json!({ "sim_id": id, "status": "queued" }))))
}

/// `GET /api/v1/simulations/{sim_id}`.
pub async fn get(State(s): State<AppState>, Path(id): Path<String>) -> Result<Json<Value>, ApiError> {
    let id = parse_id(&id, "simulation")?;
    let sim =
        s.db.call(move |c| db::get_sim(c, id))
            .await?
            .ok_or_else(|| ApiError::not_found("simulation"))?;
    let mut body = json!({
        "sim_id": sim.id,
        "config_id": sim.config_id,
        "status": sim.status.as_str(),
        "overrides": sim.overrides,
    });
    if sim.status == Status::Running
        && let Some(p) = s.runs.progress(id)
    {
        body["progress"] = json!(p);
    }
    if let Some(m) = sim.message {
        body["message"] = json!(m);
    }
    Ok(ok(body))
}

/// `POST /api/v1/simulations/{sim_id}/cancel`: a queued run never starts; a running one is
/// stopped and its partial records dropped. A finished one cannot be cancelled (409).
pub async fn cancel(State(s): State<AppState>, Path(id): Path<String>) -> Result<Json<Value>, ApiError> {
    let id = parse_id(&id, "simulation")?;
    match s.db.call(move |c| db::cancel(c, id)).await? {
        None => Err(ApiError::not_found("simulation")),
        Some(Status::Queued | Status::Running) => {
            s.runs.cancel(id);
            Ok(ok(json!({ "sim_id": id, "status": "cancelled" })))
        }
        Some(other) => Err(ApiError::new(
            StatusCode::CONFLICT,
            format!("the simulation is {} and cannot be cancelled", other.as_str()),
        )
        .with("status", other.as_str())),
    }
}
