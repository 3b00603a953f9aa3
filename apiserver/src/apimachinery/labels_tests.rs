//! Unit tests of `labels`.
use super::*;
use serde_json::json;

fn labels(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

fn parse(s: &str) -> LabelSelector {
    match LabelSelector::parse(s) {
        Ok(sel) => sel,
        Err(e) => panic!("{s}: {e}"),
    }
}

#[test]
fn parses_good_selectors() {
    for s in [
        "x=a,y=b,z=c",
        "",
        "x!=a,y=b",
        "x=",
        "x= ",
        "x=,z= ",
        "x= ,z= ",
        "!x",
        "x>1",
        "x>1,z<5",
        "x in (a)",
        "x notin (a,b)",
        "x in ()",
        "x in (,a)",
        "x in (a,)",
        "x in (a,,b)",
        "in in (in)",
        "notin notin (notin)",
        "  x  =  a  ",
        "example.com/key=value",
        "x\t=\ta",
    ] {
        assert!(
            LabelSelector::parse(s).is_ok(),
            "{s}: {:?}",
            LabelSelector::parse(s)
        );
    }
}

#[test]
fn canonical_string_forms() {
    let cases = [
        ("x=a,y=b,z=c", "x=a,y=b,z=c"),
        ("z=c,y=b,x=a", "x=a,y=b,z=c"),
        ("x==a", "x==a"),
        ("x!=a", "x!=a"),
        ("x in (b,a,b)", "x in (a,b)"),
        ("x notin (c)", "x notin (c)"),
        ("x in ()", "x in ()"),
        ("x in (,a)", "x in (,a)"),
        ("!x", "!x"),
        ("x", "x"),
        ("x>1", "x>1"),
        ("x<1", "x<1"),
        ("x=", "x="),
        ("  a   ,  !b  ", "a,!b"),
        ("b,a", "a,b"),
        ("", ""),
    ];
    for (input, canonical) in cases {
        assert_eq!(parse(input).to_string(), canonical, "{input}");
    }
}

#[test]
fn syntax_errors_use_upstream_messages() {
    let cases = [
        ("x=a,", "found '', expected: identifier after ','"),
        ("x=a,,y=b", "found ',', expected: identifier after ','"),
        (
            ",x=a",
            "found ',', expected: !, identifier, or 'end of string'",
        ),
        (
            "x in a",
            "unable to parse requirement: found 'a' expected: '('",
        ),
        (
            "x in (a",
            "unable to parse requirement: found '', expected: ',' or ')'",
        ),
        (
            "x in (a b)",
            "unable to parse requirement: found 'b', expected: ',' or ')'",
        ),
        (
            "x in (=)",
            "unable to parse requirement: found '=', expected: ',', ')' or identifier",
        ),
        (
            "x in (a,=)",
            "unable to parse requirement: found '=', expected: ',', or identifier",
        ),
        (
            "x y",
            "unable to parse requirement: found 'y', expected: in, notin, =, ==, !=, gt, lt",
        ),
        (
            "x=(a)",
            "unable to parse requirement: found '(', expected: identifier",
        ),
        (
            "!",
            "unable to parse requirement: found '', expected: identifier",
        ),
        ("!x=a", "found '=', expected: ',' or 'end of string'"),
        ("x=a y=b", "found 'y', expected: ',' or 'end of string'"),
        (
            "=a",
            "found '=', expected: !, identifier, or 'end of string'",
        ),
        (
            "x>=1",
            "unable to parse requirement: found '=', expected: identifier",
        ),
    ];
    for (input, msg) in cases {
        assert_eq!(LabelSelector::parse(input), Err(msg.to_string()), "{input}");
    }
}

#[test]
fn validation_errors_use_upstream_messages() {
    assert_eq!(
        LabelSelector::parse("-x=a"),
        Err("unable to parse requirement: <nil>: Invalid value: \"-x\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')".to_string())
    );
    assert_eq!(
        LabelSelector::parse("x=-a"),
        Err("unable to parse requirement: values[0][x]: Invalid value: \"-a\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')".to_string())
    );
    assert_eq!(
        LabelSelector::parse("x>a"),
        Err("unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, the value must be an integer".to_string())
    );
    let err = LabelSelector::parse("x<-a-").unwrap_err();
    assert!(err.starts_with("unable to parse requirement: [values[0]: Invalid value: \"-a-\": for 'Gt', 'Lt' operators, the value must be an integer, values[0][x]: Invalid value: \"-a-\": a valid label"), "{err}");
    assert!(err.ends_with("')]"), "{err}");
    let long = "a".repeat(64);
    assert_eq!(
        LabelSelector::parse(&format!("x={long}")),
        Err(format!("unable to parse requirement: values[0][x]: Invalid value: \"{long}\": must be no more than 63 characters"))
    );
    // Multiple key problems are joined with "; ".
    let err = LabelSelector::parse(&format!("{}-", "a".repeat(64))).unwrap_err();
    assert!(
        err.contains("name part must be no more than 63 characters; name part must consist"),
        "{err}"
    );
}

#[test]
fn keywords_are_values_in_value_context() {
    let sel = parse("in in (in, notin)");
    assert_eq!(sel.requirements()[0].key(), "in");
    assert_eq!(sel.requirements()[0].operator(), Operator::In);
    assert_eq!(
        sel.requirements()[0].values(),
        &["in".to_string(), "notin".to_string()]
    );
    let sel = parse("x=in");
    assert_eq!(sel.requirements()[0].values(), &["in".to_string()]);
}

#[test]
fn operator_inference() {
    let r = |s: &str| parse(s).requirements()[0].operator();
    assert_eq!(r("x"), Operator::Exists);
    assert_eq!(r("!x"), Operator::DoesNotExist);
    assert_eq!(r("x=a"), Operator::Equals);
    assert_eq!(r("x==a"), Operator::DoubleEquals);
    assert_eq!(r("x!=a"), Operator::NotEquals);
    assert_eq!(r("x in (a)"), Operator::In);
    assert_eq!(r("x notin (a)"), Operator::NotIn);
    assert_eq!(r("x>1"), Operator::GreaterThan);
    assert_eq!(r("x<1"), Operator::LessThan);
    assert_eq!(parse("x=").requirements()[0].values(), &[String::new()]);
}

#[test]
fn matching_follows_upstream() {
    let ls = labels(json!({"x": "a", "n": "5", "s": "abc"}));
    let yes = [
        "",
        "x",
        "x=a",
        "x==a",
        "x!=b",
        "y!=b",
        "!y",
        "x in (a,b)",
        "x notin (b)",
        "y notin (b)",
        "n>4",
        "n<6",
        "x=a,n>1",
    ];
    let no = [
        "y",
        "!x",
        "x=b",
        "x!=a",
        "x in (b)",
        "x notin (a)",
        "y in (a)",
        "n>5",
        "n<5",
        "s>1",
        "y>1",
        "x=a,n>9",
    ];
    for s in yes {
        assert!(parse(s).matches(&ls), "{s}");
    }
    for s in no {
        assert!(!parse(s).matches(&ls), "{s}");
    }
    assert!(parse("x=").matches(&labels(json!({"x": ""}))));
    assert!(!parse("x=").matches(&Map::new()));
    assert!(parse("!x").matches(&Map::new()));
}

#[test]
fn empty_and_nothing() {
    assert!(parse("").is_empty());
    assert!(LabelSelector::everything().is_empty());
    assert!(LabelSelector::everything().matches(&Map::new()));
    let n = LabelSelector::nothing();
    assert!(!n.is_empty());
    assert!(n.matches_nothing());
    assert!(!n.matches(&Map::new()));
    assert_eq!(n.to_string(), "");
}

#[test]
fn exact_match() {
    let sel = parse("a=1,b in (2),c in (3,4),d!=5,e==6");
    assert_eq!(sel.requires_exact_match("a"), Some("1"));
    assert_eq!(sel.requires_exact_match("b"), Some("2"));
    assert_eq!(sel.requires_exact_match("c"), None);
    assert_eq!(sel.requires_exact_match("d"), None);
    assert_eq!(sel.requires_exact_match("e"), Some("6"));
    assert_eq!(sel.requires_exact_match("z"), None);
}

#[test]
fn from_json_selector() {
    assert!(from_label_selector_json(&Value::Null).is_ok_and(|s| s.matches_nothing()));
    assert!(from_label_selector_json(&json!({})).is_ok_and(|s| s.is_empty()));
    assert!(from_label_selector_json(&json!({"matchLabels": {}})).is_ok_and(|s| s.is_empty()));
    let sel = from_label_selector_json(&json!({
        "matchLabels": {"app": "web"},
        "matchExpressions": [
            {"key": "tier", "operator": "In", "values": ["fe", "be"]},
            {"key": "env", "operator": "NotIn", "values": ["prod"]},
            {"key": "canary", "operator": "DoesNotExist"},
            {"key": "app", "operator": "Exists"}
        ]
    }))
    .unwrap_or_default();
    assert_eq!(
        sel.to_string(),
        "app=web,app,!canary,env notin (prod),tier in (be,fe)"
    );
    assert!(sel.matches(&labels(json!({"app": "web", "tier": "fe"}))));
    assert!(!sel.matches(&labels(json!({"app": "web", "tier": "fe", "canary": "1"}))));
    assert!(!sel.matches(&labels(json!({"app": "db", "tier": "fe"}))));
}

#[test]
fn from_json_errors() {
    assert_eq!(
        from_label_selector_json(
            &json!({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]})
        ),
        Err("\"Gt\" is not a valid pod selector operator".to_string())
    );
    assert_eq!(
        from_label_selector_json(&json!({"matchExpressions": [{"key": "a", "operator": "In"}]})),
        Err("values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty".to_string())
    );
    assert_eq!(
        from_label_selector_json(&json!({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]})),
        Err("values: Invalid value: []string{\"x\"}: values set must be empty for exists and does not exist".to_string())
    );
    let err = from_label_selector_json(&json!({"matchLabels": {"-a": "b"}})).unwrap_err();
    assert!(
        err.starts_with("key: Invalid value: \"-a\": name part must consist"),
        "{err}"
    );
    let err = from_label_selector_json(&json!({"matchLabels": {"a": "-b"}})).unwrap_err();
    assert!(
        err.starts_with("values[0][a]: Invalid value: \"-b\": a valid label"),
        "{err}"
    );
    assert!(from_label_selector_json(&json!("x")).is_err());
    assert!(from_label_selector_json(&json!({"matchLabels": {"a": 1}})).is_err());
}

#[test]
fn requirement_constructor() {
    let r = Requirement::new("a", Operator::Equals, vec!["b".into()]);
    assert!(r.is_ok_and(|r| r.to_string() == "a=b"));
    assert_eq!(
        Requirement::new("a", Operator::Equals, vec![]),
        Err("values: Invalid value: []string{}: exact-match compatibility requires one single value".to_string())
    );
    assert_eq!(
        Requirement::new("a", Operator::GreaterThan, vec!["1".into(), "2".into()]),
        Err("values: Invalid value: []string{\"1\", \"2\"}: for 'Gt', 'Lt' operators, exactly one value is required".to_string())
    );
    assert_eq!(Operator::GreaterThan.as_str(), "gt");
}
