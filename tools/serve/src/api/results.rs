//! The spec's two results endpoints and the signed download they link to. Only the files of a
//! completed simulation are listed; a download URL names one of them, and the download opens
//! nothing but that file in the data directory, streamed.

use super::AppState;
use super::error::{ApiError, ok, parse_id};
use crate::db::{self, FileRow, Status};
use crate::files::is_plain_name;
use axum::body::Body;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::Response;
use serde_json::{Value, json};
use std::time::{SystemTime, UNIX_EPOCH};

type Json = axum::Json<Value>;

/// The list's query: `?type=csv`.
#[derive(serde::Deserialize)]
pub struct ListQuery {
    #[serde(rename = "type")]
    kind: Option<String>,
}

/// The download URL's query: `?fileName=...`.
#[derive(serde::Deserialize)]
pub struct UrlQuery {
    #[serde(rename = "fileName")]
    file_name: Option<String>,
}

/// A download's query: the link's expiry and signature.
#[derive(serde::Deserialize)]
pub struct SignedQuery {
    expires: Option<u64>,
    signature: Option<String>,
}

/// The simulation's status and its listed files.
async fn listed(s: &AppState, id: i64) -> Result<(Status, Vec<FileRow>), ApiError> {
    s.db.call(move |c| {
        let Some(sim) = db::get_sim(c, id)? else {
            return Ok(None);
        };
        Ok(Some((sim.status, db::files(c, id)?)))
    })
    .await?
    .ok_or_else(|| ApiError::not_found("simulation"))
}

/// `GET /api/v1/simulations/{sim_id}/results[?type=csv]`: empty until the run completes.
pub async fn list(
    State(s): State<AppState>,
    Path(id): Path<String>,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Json, ApiError> {
    let Query(q) = query.map_err(ApiError::rejection)?;
    let id = parse_id(&id, "simulation")?;
    let (status, files) = listed(&s, id).await?;
    let want = q.kind.map(|k| k.to_ascii_lowercase());
    let results: Vec<Value> = files
        .into_iter()
        .filter(|f| want.as_ref().is_none_or(|k| *k == f.kind))
        .map(|f| json!({"fileName": f.name, "type": f.kind, "bytes": f.bytes}))
        .collect();
    Ok(ok(
        json!({ "sim_id": id, "status": status.as_str(), "results": results }),
    ))
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// `GET /api/v1/simulations/{sim_id}/results/download-url?fileName=NAME`: a link to one listed
/// file, valid for the server's `--url-ttl`.
pub async fn download_url(
    State(s): State<AppState>,
    Path(id): Path<String>,
    query: Result<Query<UrlQuery>, QueryRejection>,
) -> Result<Json, ApiError> {
    let Query(q) = query.map_err(ApiError::rejection)?;
    let id = parse_id(&id, "simulation")?;
    let Some(name) = q.file_name else {
        return Err(ApiError::bad_request(
            "fileName: missing; give a name from the results list",
        ));
    };
    if !is_plain_name(&name) {
        return Err(ApiError::bad_request(
            "fileName: a file name from the results list, not a path",
        ));
    }
    let (_, files) = listed(&s, id).await?;
    if !files.iter().any(|f| f.name == name) {
        return Err(ApiError::not_found("file in this simulation's results"));
    }
    let expires = now().saturating_add(s.url_ttl_secs);
    let signature = s.signer.sign(id, &name, expires);
    let url = format!(
        "{}/api/v1/simulations/{id}/results/files/{name}?expires={expires}&signature={signature}",
        s.base_url
    );
    Ok(ok(json!({ "url": url, "fileName": name, "expires": expires })))
}

/// `GET /api/v1/simulations/{sim_id}/results/files/{file_name}?expires=T&signature=S`: the file,
/// streamed. A link that is not signed for this file, or has expired, is 403.
pub async fn download(
    State(s): State<AppState>,
    Path((id, name)): Path<(String, String)>,
    query: Result<Query<SignedQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let forbidden = || {
        ApiError::new(
            StatusCode::FORBIDDEN,
            "the link is not valid for this file or has expired",
        )
    };
    let Ok(Query(q)) = query else {
        return Err(forbidden());
    };
    let id = parse_id(&id, "simulation")?;
    let (Some(expires), Some(signature)) = (q.expires, q.signature) else {
        return Err(forbidden());
    };
    if !s.signer.verify(id, &name, expires, &signature, now()) {
        return Err(forbidden());
    }
    let (_, files) = listed(&s, id).await?;
    if !files.iter().any(|f| f.name == name) {
        return Err(ApiError::not_found("file in this simulation's results"));
    }
    let layout = s.layout.clone();
    let opened = tokio::task::spawn_blocking(move || layout.open_result(id, &name).map(|f| (f, name)))
        .await
        .map_err(ApiError::internal)?;
    let Some(((file, len), name)) = opened else {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "the file is not a regular file of the data directory",
        ));
    };
    let stream = tokio_util::io::ReaderStream::new(tokio::fs::File::from_std(file));
    let content_type = match crate::files::kind_of(&name).as_str() {
        "csv" => "text/csv",
        "json" => "application/json",
        _ => "application/octet-stream",
    };
    Response::builder()
        .header(header::CONTENT_TYPE, content_type)
        .header(header::CONTENT_LENGTH, len)
        .header(header::CONTENT_DISPOSITION, format!("attachment; filename=\"{name}\""))
        .body(Body::from_stream(stream))
        .map_err(ApiError::internal)
}
