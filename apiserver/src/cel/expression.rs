//! One CEL expression over named JSON variables, as admission evaluates
//! them (webhook `matchConditions`, ValidatingAdmissionPolicy validations):
//! compiled once when its configuration is read, evaluated per request with
//! its cost checked against upstream's per-call limit before it runs.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{cost, env, to_cel, PER_CALL_LIMIT};

/// A compiled expression; one that does not compile keeps its error, which
/// every evaluation reports.
pub struct Expression {
    pub source: String,
    program: Result<::cel::Program, String>,
}

impl std::fmt::Debug for Expression {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Expression")
            .field("source", &self.source)
            .finish()
    }
}

impl Expression {
    /// Compiles `source` in the Kubernetes CEL environment.
    pub fn compile(source: &str) -> Expression {
        Expression {
            source: source.to_string(),
            program: super::compile(source),
        }
    }

    /// The compile error, if any.
    pub fn compile_error(&self) -> Option<&str> {
        self.program.as_ref().err().map(String::as_str)
    }

    /// Evaluates the expression with `vars` bound; the error says why it
    /// could not be evaluated (compile error, cost, runtime error).
    pub fn eval(&self, vars: &[(&str, &Value)]) -> Result<::cel::Value, String> {
        self.eval_as(vars, None)
    }

    /// Evaluates with the `authorizer` variable bound too (admission
    /// expressions; see [`super::library::authz`]).
    pub fn eval_as(
        &self,
        vars: &[(&str, &Value)],
        authorizer: Option<&super::library::authz::Authorizer>,
    ) -> Result<::cel::Value, String> {
        let program = self
            .program
            .as_ref()
            .map_err(|e| format!("compilation failed: {e}"))?;
        let shapes: BTreeMap<String, cost::Shape> = vars
            .iter()
            .map(|(n, v)| (n.to_string(), cost::Shape::of_value(v)))
            .collect();
        if cost::estimate(program.expression(), &shapes) > PER_CALL_LIMIT {
            return Err(format!(
                "operation cancelled: actual cost limit exceeded evaluating expression: {}",
                self.source
            ));
        }
        let mut ctx = ::cel::Context::with_env(env());
        for (name, v) in vars {
            ctx.add_variable_from_value(*name, to_cel(v));
        }
        if let Some(a) = authorizer {
            ctx.add_variable_as_val("authorizer", Box::new(a.clone()));
        }
        program.execute(&ctx).map_err(|e| e.to_string())
    }

    /// Evaluates an expression that must yield a boolean.
    pub fn eval_bool(&self, vars: &[(&str, &Value)]) -> Result<bool, String> {
        self.eval_bool_as(vars, None)
    }

    /// [`Expression::eval_bool`] with the `authorizer` variable bound.
    pub fn eval_bool_as(
        &self,
        vars: &[(&str, &Value)],
        authorizer: Option<&super::library::authz::Authorizer>,
    ) -> Result<bool, String> {
        match self.eval_as(vars, authorizer)? {
            ::cel::Value::Bool(b) => Ok(b),
            other => Err(format!(
                "expression '{}' resulted in error: no such overload: expected a bool, got {:?}",
                self.source,
                other.type_of()
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn evaluates_over_json_variables() {
        let e = Expression::compile(
            "object.metadata.name.startsWith('a') && request.operation == 'CREATE'",
        );
        let obj = json!({"metadata": {"name": "abc"}});
        let req = json!({"operation": "CREATE"});
        assert_eq!(
            e.eval_bool(&[("object", &obj), ("request", &req)]),
            Ok(true)
        );
        let obj = json!({"metadata": {"name": "x"}});
        assert_eq!(
            e.eval_bool(&[("object", &obj), ("request", &req)]),
            Ok(false)
        );
    }

    #[test]
    fn reports_compile_runtime_and_type_errors() {
        let bad = Expression::compile("object.(");
        assert!(bad.compile_error().is_some());
        assert!(bad.eval(&[]).unwrap_err().starts_with("compilation failed"));
        let missing = Expression::compile("object.spec.replicas > 1");
        assert!(missing.eval_bool(&[("object", &json!({}))]).is_err());
        let not_bool = Expression::compile("1 + 1");
        assert!(not_bool.eval_bool(&[]).is_err());
    }
}

#[cfg(test)]
mod hostile_tests {
    use super::*;

    /// Ten thousand chained operators or brackets overflowed the stack of
    /// the thread compiling them; now each is a compile error, evaluated on
    /// a thread with a tokio worker's 2 MiB stack.
    #[test]
    fn deeply_nested_expressions_are_refused_without_overflow() {
        let sources = [
            "1 + ".repeat(10_000) + "1",
            "true && ".repeat(10_000) + "true",
            format!("{}1{}", "(".repeat(10_000), ")".repeat(10_000)),
            format!("{}1{}", "[".repeat(10_000), "]".repeat(10_000)),
            format!("self{}", ".a".repeat(10_000)),
            format!("{}true", "!".repeat(10_000)),
        ];
        for src in sources {
            let handle = std::thread::Builder::new()
                .stack_size(2 << 20)
                .spawn(move || Expression::compile(&src).compile_error().map(str::to_owned))
                .expect("thread");
            let err = handle.join().expect("no overflow").expect("refused");
            assert!(err.contains("recursion limit"), "{err}");
        }
        let fine = "1 + ".repeat(200) + "1";
        let e = Expression::compile(&fine);
        assert_eq!(e.compile_error(), None);
        assert_eq!(e.eval(&[]).ok(), Some(::cel::Value::Int(201)));
    }
}
