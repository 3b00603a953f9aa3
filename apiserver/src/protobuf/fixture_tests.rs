//! Fixtures encoded by an independent implementation: prost with the
//! `k8s-pb` bindings generated from upstream's `generated.proto` (in a
//! throwaway program, not part of this repository), with the non-pointer
//! fields set the way Go's marshaller writes them. The expected JSON is
//! what upstream's JSON encoder writes for these objects, in its key
//! order.

use super::*;

pub(super) fn hex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .filter_map(|i| s.get(2 * i..2 * i + 2))
        .filter_map(|byte| u8::from_str_radix(byte, 16).ok())
        .collect()
}

fn check(fixture: &str, want: &str) {
    let got = match decode_object(&hex(fixture)) {
        Ok(value) => value,
        Err(e) => panic!("decode failed: {e}"),
    };
    let want: Value = match serde_json::from_str(want) {
        Ok(value) => value,
        Err(e) => panic!("bad expectation: {e}"),
    };
    // Same content first (a readable diff), then the same key order.
    assert_eq!(got, want);
    assert_eq!(got.to_string(), want.to_string());
}

const POD: &str = concat!(
    "6b3873000a090a0276311203506f6412ee060a5e0a0377656212001a0764656661756c7422002a0032003800",
    "42005a0a0a0361707012037765625a0a0a04746965721202666562060a046e6f74656a220a0a5265706c6963",
    "615365741a0272732203752d312a07617070732f76313001380112b7050a1e0a06636f6e66696712149a0111",
    "0a040a02636d12060a016112016218a4030a130a0464617461120b12090a0012050a033147690a110a037365",
    "63120a32080a017318a403200012c9020a03617070120a6e67696e783a312e32372a0032110a046874747010",
    "00185022035443502a003a060a01411201313a1e0a03504f4412001a150a130a027631120d6d657461646174",
    "612e6e616d6542310a0d0a0363707512060a043530306d0a110a066d656d6f727912070a053132384d69120d",
    "0a0363707512060a043235306d4a180a06636f6e66696710011a082f6574632f6366672200320052210a1512",
    "130a012f1206080010501a001a0022044854545010051801200a280130035a1c0a101a0e0a0a080110001a04",
    "6874747012001000180020002800300062061204220208056a142f6465762f7465726d696e6174696f6e2d6c",
    "6f67720c49664e6f7450726573656e747a200a051203414c4c20e807280138005a100a0e52756e74696d6544",
    "656661756c748001008801009001009a010c0a02505f12060a040a02636da2010446696c651a06416c776179",
    "73201e320c436c757374657246697273743a190a106b756265726e657465732e696f2f6f7312056c696e7578",
    "420764656661756c744a005200580060006800720328d00f8201008a01009201460a160a140a120a100a047a",
    "6f6e651202496e1a01611a01621a2c122a086412260a0c0a0a0a0361707012037765621a166b756265726e65",
    "7465732e696f2f686f73746e616d659a011164656661756c742d7363686564756c6572a201250a04696e6974",
    "120762757379626f781a0273681a022d631a076563686f2068694200800100b201190a016b1205457175616c",
    "1a0176220a4e6f5363686564756c65c20100c80100f001018a0225080112047a6f6e651a0d446f4e6f745363",
    "686564756c65220c0a0a0a0361707012037765621a520a0750656e64696e6712260a0c506f64536368656475",
    "6c65641204547275651a0022080880e2cfaa0610002a00320038001a0022002a0032003a080881e2cfaa0610",
    "004a09427572737461626c655a0072001a002200",
);

const CRON_JOB: &str = concat!(
    "6b3873000a130a0862617463682f7631120743726f6e4a6f621280010a1e0a076e696768746c7912001a0764",
    "656661756c7422002a00320038004200125c0a09302030202a202a202a1a002a4d0a0b0a076e696768746c79",
    "4200123e32230a024200121d12100a036a6f62120762757379626f7842001a094f6e4661696c75726538005a",
    "150a130a074661696c4a6f6212081202496e1801182a1a001a002200",
);

const SERVICE: &str = concat!(
    "6b3873000a0d0a02763112075365727669636512cc010a190a026c6212001a0764656661756c7422002a0032",
    "0038004200126d0a1b0a00120354435018bb03220b080110001a05687474707328ebed01120a0a0361707012",
    "037765621a00220c4c6f616442616c616e6365723a08436c69656e7449505a054c6f63616c6000680072050a",
    "0308b0548a010b53696e676c65537461636b9a010449507634a001001a400a1d0a1b0a0831302e302e302e31",
    "12001a03564950220808bb031203544350121f0a055265616479120454727565180022080880e2cfaa061000",
    "2a024f6b32001a002200",
);

/// Every fixture, with its name.
pub(super) const FIXTURES: &[(&str, &str)] =
    &[(POD, "Pod"), (CRON_JOB, "CronJob"), (SERVICE, "Service")];

#[test]
fn pod_fixture() {
    check(
        POD,
        r#"{"kind":"Pod","apiVersion":"v1",
        "metadata":{"name":"web","namespace":"default","creationTimestamp":null,
            "labels":{"app":"web","tier":"fe"},"annotations":{"note":""},
            "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"u-1",
                "controller":true,"blockOwnerDeletion":true}]},
        "spec":{
            "volumes":[
                {"name":"config","configMap":{"name":"cm","items":[{"key":"a","path":"b"}],"defaultMode":420}},
                {"name":"data","emptyDir":{"sizeLimit":"1Gi"}},
                {"name":"sec","secret":{"secretName":"s","defaultMode":420,"optional":false}}],
            "initContainers":[{"name":"init","image":"busybox","command":["sh","-c","echo hi"],"resources":{}}],
            "containers":[{"name":"app","image":"nginx:1.27",
                "ports":[{"name":"http","containerPort":80,"protocol":"TCP"}],
                "envFrom":[{"prefix":"P_","configMapRef":{"name":"cm"}}],
                "env":[{"name":"A","value":"1"},
                    {"name":"POD","valueFrom":{"fieldRef":{"apiVersion":"v1","fieldPath":"metadata.name"}}}],
                "resources":{"limits":{"cpu":"500m","memory":"128Mi"},"requests":{"cpu":"250m"}},
                "volumeMounts":[{"name":"config","readOnly":true,"mountPath":"/etc/cfg"}],
                "livenessProbe":{"httpGet":{"path":"/","port":80,"scheme":"HTTP"},"initialDelaySeconds":5,
                    "timeoutSeconds":1,"periodSeconds":10,"successThreshold":1,"failureThreshold":3},
                "readinessProbe":{"tcpSocket":{"port":"http"}},
                "lifecycle":{"preStop":{"sleep":{"seconds":5}}},
                "terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File",
                "imagePullPolicy":"IfNotPresent",
                "securityContext":{"capabilities":{"drop":["ALL"]},"runAsUser":1000,"runAsNonRoot":true,
                    "allowPrivilegeEscalation":false,"seccompProfile":{"type":"RuntimeDefault"}}}],
            "restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst",
            "nodeSelector":{"kubernetes.io/os":"linux"},"serviceAccountName":"default",
            "securityContext":{"fsGroup":2000},
            "affinity":{
                "nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
                    {"matchExpressions":[{"key":"zone","operator":"In","values":["a","b"]}]}]}},
                "podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":100,
                    "podAffinityTerm":{"labelSelector":{"matchLabels":{"app":"web"}},
                        "topologyKey":"kubernetes.io/hostname"}}]}},
            "schedulerName":"default-scheduler",
            "tolerations":[{"key":"k","operator":"Equal","value":"v","effect":"NoSchedule"}],
            "priority":0,"enableServiceLinks":true,
            "topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule",
                "labelSelector":{"matchLabels":{"app":"web"}}}]},
        "status":{"phase":"Pending",
            "conditions":[{"type":"PodScheduled","status":"True","lastProbeTime":null,
                "lastTransitionTime":"2023-11-14T22:13:20Z"}],
            "startTime":"2023-11-14T22:13:21Z","qosClass":"Burstable"}}"#,
    );
}

#[test]
fn cron_job_fixture() {
    check(
        CRON_JOB,
        r#"{"kind":"CronJob","apiVersion":"batch/v1",
        "metadata":{"name":"nightly","namespace":"default","creationTimestamp":null},
        "spec":{"schedule":"0 0 * * *",
            "jobTemplate":{"metadata":{"name":"nightly","creationTimestamp":null},
                "spec":{"podFailurePolicy":{"rules":[{"action":"FailJob",
                        "onExitCodes":{"operator":"In","values":[1,42]}}]},
                    "backoffLimit":0,
                    "template":{"metadata":{"creationTimestamp":null},
                        "spec":{"containers":[{"name":"job","image":"busybox","resources":{}}],
                            "restartPolicy":"OnFailure"}}}}},
        "status":{}}"#,
    );
}

#[test]
fn service_fixture() {
    check(
        SERVICE,
        r#"{"kind":"Service","apiVersion":"v1",
        "metadata":{"name":"lb","namespace":"default","creationTimestamp":null},
        "spec":{"ports":[{"protocol":"TCP","port":443,"targetPort":"https","nodePort":30443}],
            "selector":{"app":"web"},"type":"LoadBalancer","sessionAffinity":"ClientIP",
            "externalTrafficPolicy":"Local",
            "sessionAffinityConfig":{"clientIP":{"timeoutSeconds":10800}},
            "ipFamilies":["IPv4"],"ipFamilyPolicy":"SingleStack","allocateLoadBalancerNodePorts":false},
        "status":{"loadBalancer":{"ingress":[{"ip":"10.0.0.1","ipMode":"VIP",
                "ports":[{"port":443,"protocol":"TCP"}]}]},
            "conditions":[{"type":"Ready","status":"True",
                "lastTransitionTime":"2023-11-14T22:13:20Z","reason":"Ok"}]}}"#,
    );
}
