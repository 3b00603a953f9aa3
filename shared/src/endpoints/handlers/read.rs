//! GET of one object and LIST of a collection.

use serde_json::{json, Map, Value};

use super::{json_response, shape_object, RestRequest};
use crate::body::Response;
use crate::endpoints::negotiation::{Negotiated, Output};
use crate::endpoints::status::ApiError;
use crate::registry::store::{ListPage, Store};
use crate::registry::table;

/// GET `/.../<resource>/<name>[/status]`.
pub async fn get(
    rest: &RestRequest<'_>,
    namespace: &str,
    neg: &Negotiated,
) -> Result<Response, ApiError> {
    let obj = rest.store.get(namespace, &rest.info.name).await?;
    Ok(json_response(
        200,
        &shape_object(rest.store, obj, neg),
        neg.pretty,
    ))
}

/// GET on a collection.
pub async fn list(
    rest: &RestRequest<'_>,
    namespace: &str,
    neg: &Negotiated,
) -> Result<Response, ApiError> {
    let opts = rest.query.list_options()?;
    let page = rest.store.list(namespace, &opts).await?;
    Ok(json_response(
        200,
        &list_body(rest.store, page, neg),
        neg.pretty,
    ))
}

/// `metadata` of a list.
pub fn list_meta(page: &ListPage) -> Value {
    let mut m = Map::new();
    m.insert(
        "resourceVersion".into(),
        Value::String(page.resource_version.to_string()),
    );
    if let Some(c) = &page.continue_token {
        m.insert("continue".into(), Value::String(c.clone()));
    }
    if let Some(r) = page.remaining_item_count {
        m.insert("remainingItemCount".into(), json!(r));
    }
    Value::Object(m)
}

/// A list response in the negotiated shape. Items of typed lists carry no
/// `kind`/`apiVersion`, as upstream serializes them.
pub fn list_body(store: &Store, page: ListPage, neg: &Negotiated) -> Value {
    let meta = list_meta(&page);
    match neg.output {
        Output::Table => table::table(&store.def, &page.items, meta, neg.include_object, true),
        Output::PartialObjectMetadataList | Output::PartialObjectMetadata => json!({
            "kind": "PartialObjectMetadataList",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": meta,
            "items": page.items.iter().map(table::partial_object_metadata).collect::<Vec<_>>(),
        }),
        Output::Object => {
            let items: Vec<Value> = page
                .items
                .into_iter()
                .map(|mut o| {
                    if let Value::Object(m) = &mut o {
                        m.remove("kind");
                        m.remove("apiVersion");
                    }
                    o
                })
                .collect();
            json!({
                "kind": format!("{}List", store.def.kind),
                "apiVersion": store.def.api_version(),
                "metadata": meta,
                "items": items,
            })
        }
    }
}
