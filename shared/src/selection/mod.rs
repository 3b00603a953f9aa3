//! Label and field selectors as accepted by `?labelSelector=` and
//! `?fieldSelector=`, after upstream's `k8s.io/apimachinery/pkg/labels` and
//! `k8s.io/apimachinery/pkg/fields`.

pub mod fields;
pub mod labels;
