//! core/v1 volume sources, projections, persistent volumes and the
//! topology terms of storage classes.

use super::*;

/// core/v1 volume messages.
pub(super) const MESSAGES: &[Message] = &[
    msg(
        "core.v1.AWSElasticBlockStoreVolumeSource",
        &[
            s(1, "volumeID"),
            s(2, "fsType"),
            int32(3, "partition"),
            b(4, "readOnly"),
        ],
    ),
    msg(
        "core.v1.AttachedVolume",
        &[s(1, "name"), s(2, "devicePath")],
    ),
    msg(
        "core.v1.AzureDiskVolumeSource",
        &[
            s(1, "diskName"),
            s(2, "diskURI"),
            sp(3, "cachingMode"),
            sp(4, "fsType"),
            bp(5, "readOnly"),
            sp(6, "kind"),
        ],
    ),
    msg(
        "core.v1.AzureFilePersistentVolumeSource",
        &[
            s(1, "secretName"),
            s(2, "shareName"),
            b(3, "readOnly"),
            sp(4, "secretNamespace"),
        ],
    ),
    msg(
        "core.v1.AzureFileVolumeSource",
        &[s(1, "secretName"), s(2, "shareName"), b(3, "readOnly")],
    ),
    msg(
        "core.v1.CSIPersistentVolumeSource",
        &[
            s(1, "driver"),
            s(2, "volumeHandle"),
            b(3, "readOnly"),
            s(4, "fsType"),
            mss(5, "volumeAttributes"),
            m(6, "controllerPublishSecretRef", "core.v1.SecretReference"),
            m(7, "nodeStageSecretRef", "core.v1.SecretReference"),
            m(8, "nodePublishSecretRef", "core.v1.SecretReference"),
            m(9, "controllerExpandSecretRef", "core.v1.SecretReference"),
            m(10, "nodeExpandSecretRef", "core.v1.SecretReference"),
        ],
    ),
    msg(
        "core.v1.CSIVolumeSource",
        &[
            s(1, "driver"),
            bp(2, "readOnly"),
            sp(3, "fsType"),
            mss(4, "volumeAttributes"),
            m(5, "nodePublishSecretRef", "core.v1.LocalObjectReference"),
        ],
    ),
    msg(
        "core.v1.CephFSPersistentVolumeSource",
        &[
            rs(1, "monitors"),
            s(2, "path"),
            s(3, "user"),
            s(4, "secretFile"),
            m(5, "secretRef", "core.v1.SecretReference"),
            b(6, "readOnly"),
        ],
    ),
    msg(
        "core.v1.CephFSVolumeSource",
        &[
            rs(1, "monitors"),
            s(2, "path"),
            s(3, "user"),
            s(4, "secretFile"),
            m(5, "secretRef", "core.v1.LocalObjectReference"),
            b(6, "readOnly"),
        ],
    ),
    msg(
        "core.v1.CinderPersistentVolumeSource",
        &[
            s(1, "volumeID"),
            s(2, "fsType"),
            b(3, "readOnly"),
            m(4, "secretRef", "core.v1.SecretReference"),
        ],
    ),
    msg(
        "core.v1.CinderVolumeSource",
        &[
            s(1, "volumeID"),
            s(2, "fsType"),
            b(3, "readOnly"),
            m(4, "secretRef", "core.v1.LocalObjectReference"),
        ],
    ),
    msg(
        "core.v1.ClusterTrustBundleProjection",
        &[
            s(1, "name"),
            s(2, "signerName"),
            m(3, "labelSelector", "meta.v1.LabelSelector"),
            bp(5, "optional"),
            s(4, "path"),
        ],
    ),
    msg(
        "core.v1.ConfigMapProjection",
        &[
            inl(1, "localObjectReference", "core.v1.LocalObjectReference"),
            rm(2, "items", "core.v1.KeyToPath"),
            bp(4, "optional"),
        ],
    ),
    msg(
        "core.v1.ConfigMapVolumeSource",
        &[
            inl(1, "localObjectReference", "core.v1.LocalObjectReference"),
            rm(2, "items", "core.v1.KeyToPath"),
            int32p(3, "defaultMode"),
            bp(4, "optional"),
        ],
    ),
    msg(
        "core.v1.DownwardAPIProjection",
        &[rm(1, "items", "core.v1.DownwardAPIVolumeFile")],
    ),
    msg(
        "core.v1.DownwardAPIVolumeFile",
        &[
            s(1, "path"),
            m(2, "fieldRef", "core.v1.ObjectFieldSelector"),
            m(3, "resourceFieldRef", "core.v1.ResourceFieldSelector"),
            int32p(4, "mode"),
        ],
    ),
    msg(
        "core.v1.DownwardAPIVolumeSource",
        &[
            rm(1, "items", "core.v1.DownwardAPIVolumeFile"),
            int32p(2, "defaultMode"),
        ],
    ),
    msg(
        "core.v1.EmptyDirVolumeSource",
        &[s(1, "medium"), qty(2, "sizeLimit")],
    ),
    msg(
        "core.v1.EphemeralVolumeSource",
        &[m(
            1,
            "volumeClaimTemplate",
            "core.v1.PersistentVolumeClaimTemplate",
        )],
    ),
    msg(
        "core.v1.FCVolumeSource",
        &[
            rs(1, "targetWWNs"),
            int32p(2, "lun"),
            s(3, "fsType"),
            b(4, "readOnly"),
            rs(5, "wwids"),
        ],
    ),
    msg(
        "core.v1.FlexPersistentVolumeSource",
        &[
            s(1, "driver"),
            s(2, "fsType"),
            m(3, "secretRef", "core.v1.SecretReference"),
            b(4, "readOnly"),
            mss(5, "options"),
        ],
    ),
    msg(
        "core.v1.FlexVolumeSource",
        &[
            s(1, "driver"),
            s(2, "fsType"),
            m(3, "secretRef", "core.v1.LocalObjectReference"),
            b(4, "readOnly"),
            mss(5, "options"),
        ],
    ),
    msg(
        "core.v1.FlockerVolumeSource",
        &[s(1, "datasetName"), s(2, "datasetUUID")],
    ),
    msg(
        "core.v1.GCEPersistentDiskVolumeSource",
        &[
            s(1, "pdName"),
            s(2, "fsType"),
            int32(3, "partition"),
            b(4, "readOnly"),
        ],
    ),
    msg(
        "core.v1.GitRepoVolumeSource",
        &[s(1, "repository"), s(2, "revision"), s(3, "directory")],
    ),
    msg(
        "core.v1.GlusterfsPersistentVolumeSource",
        &[
            s(1, "endpoints"),
            s(2, "path"),
            b(3, "readOnly"),
            s(4, "endpointsNamespace"),
        ],
    ),
    msg(
        "core.v1.GlusterfsVolumeSource",
        &[s(1, "endpoints"), s(2, "path"), b(3, "readOnly")],
    ),
    msg(
        "core.v1.HostPathVolumeSource",
        &[s(1, "path"), sp(2, "type")],
    ),
    msg(
        "core.v1.ISCSIPersistentVolumeSource",
        &[
            s(1, "targetPortal"),
            s(2, "iqn"),
            int32p(3, "lun"),
            s(4, "iscsiInterface"),
            s(5, "fsType"),
            b(6, "readOnly"),
            rs(7, "portals"),
            b(8, "chapAuthDiscovery"),
            b(11, "chapAuthSession"),
            m(10, "secretRef", "core.v1.SecretReference"),
            sp(12, "initiatorName"),
        ],
    ),
    msg(
        "core.v1.ISCSIVolumeSource",
        &[
            s(1, "targetPortal"),
            s(2, "iqn"),
            int32p(3, "lun"),
            s(4, "iscsiInterface"),
            s(5, "fsType"),
            b(6, "readOnly"),
            rs(7, "portals"),
            b(8, "chapAuthDiscovery"),
            b(11, "chapAuthSession"),
            m(10, "secretRef", "core.v1.LocalObjectReference"),
            sp(12, "initiatorName"),
        ],
    ),
    msg(
        "core.v1.ImageVolumeSource",
        &[s(1, "reference"), s(2, "pullPolicy")],
    ),
    msg(
        "core.v1.KeyToPath",
        &[s(1, "key"), s(2, "path"), int32p(3, "mode")],
    ),
    msg(
        "core.v1.LocalVolumeSource",
        &[s(1, "path"), sp(2, "fsType")],
    ),
    msg(
        "core.v1.ModifyVolumeStatus",
        &[s(1, "targetVolumeAttributesClassName"), s(2, "status")],
    ),
    msg(
        "core.v1.NFSVolumeSource",
        &[s(1, "server"), s(2, "path"), b(3, "readOnly")],
    ),
    top_level(
        "core.v1.PersistentVolume",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "core.v1.PersistentVolumeSpec"),
            m(3, "status", "core.v1.PersistentVolumeStatus"),
        ],
    ),
    top_level(
        "core.v1.PersistentVolumeClaim",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "core.v1.PersistentVolumeClaimSpec"),
            m(3, "status", "core.v1.PersistentVolumeClaimStatus"),
        ],
    ),
    msg(
        "core.v1.PersistentVolumeClaimCondition",
        &[
            s(1, "type"),
            s(2, "status"),
            time(3, "lastProbeTime"),
            time(4, "lastTransitionTime"),
            s(5, "reason"),
            s(6, "message"),
        ],
    ),
    msg(
        "core.v1.PersistentVolumeClaimSpec",
        &[
            rs(1, "accessModes"),
            m(4, "selector", "meta.v1.LabelSelector"),
            m(2, "resources", "core.v1.VolumeResourceRequirements"),
            s(3, "volumeName"),
            sp(5, "storageClassName"),
            sp(6, "volumeMode"),
            m(7, "dataSource", "core.v1.TypedLocalObjectReference"),
            m(8, "dataSourceRef", "core.v1.TypedObjectReference"),
            sp(9, "volumeAttributesClassName"),
        ],
    ),
    msg(
        "core.v1.PersistentVolumeClaimStatus",
        &[
            s(1, "phase"),
            rs(2, "accessModes"),
            msq(3, "capacity"),
            rm(4, "conditions", "core.v1.PersistentVolumeClaimCondition"),
            msq(5, "allocatedResources"),
            mss(7, "allocatedResourceStatuses"),
            sp(8, "currentVolumeAttributesClassName"),
            m(9, "modifyVolumeStatus", "core.v1.ModifyVolumeStatus"),
        ],
    ),
    msg(
        "core.v1.PersistentVolumeClaimTemplate",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "core.v1.PersistentVolumeClaimSpec"),
        ],
    ),
    msg(
        "core.v1.PersistentVolumeClaimVolumeSource",
        &[s(1, "claimName"), b(2, "readOnly")],
    ),
    msg(
        "core.v1.PersistentVolumeSource",
        &[
            m(
                1,
                "gcePersistentDisk",
                "core.v1.GCEPersistentDiskVolumeSource",
            ),
            m(
                2,
                "awsElasticBlockStore",
                "core.v1.AWSElasticBlockStoreVolumeSource",
            ),
            m(3, "hostPath", "core.v1.HostPathVolumeSource"),
            m(4, "glusterfs", "core.v1.GlusterfsPersistentVolumeSource"),
            m(5, "nfs", "core.v1.NFSVolumeSource"),
            m(6, "rbd", "core.v1.RBDPersistentVolumeSource"),
            m(7, "iscsi", "core.v1.ISCSIPersistentVolumeSource"),
            m(8, "cinder", "core.v1.CinderPersistentVolumeSource"),
            m(9, "cephfs", "core.v1.CephFSPersistentVolumeSource"),
            m(10, "fc", "core.v1.FCVolumeSource"),
            m(11, "flocker", "core.v1.FlockerVolumeSource"),
            m(12, "flexVolume", "core.v1.FlexPersistentVolumeSource"),
            m(13, "azureFile", "core.v1.AzureFilePersistentVolumeSource"),
            m(
                14,
                "vsphereVolume",
                "core.v1.VsphereVirtualDiskVolumeSource",
            ),
            m(15, "quobyte", "core.v1.QuobyteVolumeSource"),
            m(16, "azureDisk", "core.v1.AzureDiskVolumeSource"),
            m(
                17,
                "photonPersistentDisk",
                "core.v1.PhotonPersistentDiskVolumeSource",
            ),
            m(18, "portworxVolume", "core.v1.PortworxVolumeSource"),
            m(19, "scaleIO", "core.v1.ScaleIOPersistentVolumeSource"),
            m(20, "local", "core.v1.LocalVolumeSource"),
            m(21, "storageos", "core.v1.StorageOSPersistentVolumeSource"),
            m(22, "csi", "core.v1.CSIPersistentVolumeSource"),
        ],
    ),
    msg(
        "core.v1.PersistentVolumeSpec",
        &[
            msq(1, "capacity"),
            inl(
                2,
                "persistentVolumeSource",
                "core.v1.PersistentVolumeSource",
            ),
            rs(3, "accessModes"),
            m(4, "claimRef", "core.v1.ObjectReference"),
            s(5, "persistentVolumeReclaimPolicy"),
            s(6, "storageClassName"),
            rs(7, "mountOptions"),
            sp(8, "volumeMode"),
            m(9, "nodeAffinity", "core.v1.VolumeNodeAffinity"),
            sp(10, "volumeAttributesClassName"),
        ],
    ),
    msg(
        "core.v1.PersistentVolumeStatus",
        &[
            s(1, "phase"),
            s(2, "message"),
            s(3, "reason"),
            time(4, "lastPhaseTransitionTime"),
        ],
    ),
    msg(
        "core.v1.PhotonPersistentDiskVolumeSource",
        &[s(1, "pdID"), s(2, "fsType")],
    ),
    msg(
        "core.v1.PortworxVolumeSource",
        &[s(1, "volumeID"), s(2, "fsType"), b(3, "readOnly")],
    ),
    msg(
        "core.v1.ProjectedVolumeSource",
        &[
            rm(1, "sources", "core.v1.VolumeProjection"),
            int32p(2, "defaultMode"),
        ],
    ),
    msg(
        "core.v1.QuobyteVolumeSource",
        &[
            s(1, "registry"),
            s(2, "volume"),
            b(3, "readOnly"),
            s(4, "user"),
            s(5, "group"),
            s(6, "tenant"),
        ],
    ),
    msg(
        "core.v1.RBDPersistentVolumeSource",
        &[
            rs(1, "monitors"),
            s(2, "image"),
            s(3, "fsType"),
            s(4, "pool"),
            s(5, "user"),
            s(6, "keyring"),
            m(7, "secretRef", "core.v1.SecretReference"),
            b(8, "readOnly"),
        ],
    ),
    msg(
        "core.v1.RBDVolumeSource",
        &[
            rs(1, "monitors"),
            s(2, "image"),
            s(3, "fsType"),
            s(4, "pool"),
            s(5, "user"),
            s(6, "keyring"),
            m(7, "secretRef", "core.v1.LocalObjectReference"),
            b(8, "readOnly"),
        ],
    ),
    msg(
        "core.v1.ScaleIOPersistentVolumeSource",
        &[
            s(1, "gateway"),
            s(2, "system"),
            m(3, "secretRef", "core.v1.SecretReference"),
            b(4, "sslEnabled"),
            s(5, "protectionDomain"),
            s(6, "storagePool"),
            s(7, "storageMode"),
            s(8, "volumeName"),
            s(9, "fsType"),
            b(10, "readOnly"),
        ],
    ),
    msg(
        "core.v1.ScaleIOVolumeSource",
        &[
            s(1, "gateway"),
            s(2, "system"),
            m(3, "secretRef", "core.v1.LocalObjectReference"),
            b(4, "sslEnabled"),
            s(5, "protectionDomain"),
            s(6, "storagePool"),
            s(7, "storageMode"),
            s(8, "volumeName"),
            s(9, "fsType"),
            b(10, "readOnly"),
        ],
    ),
    msg(
        "core.v1.SecretProjection",
        &[
            inl(1, "localObjectReference", "core.v1.LocalObjectReference"),
            rm(2, "items", "core.v1.KeyToPath"),
            bp(4, "optional"),
        ],
    ),
    msg(
        "core.v1.SecretReference",
        &[s(1, "name"), s(2, "namespace")],
    ),
    msg(
        "core.v1.SecretVolumeSource",
        &[
            s(1, "secretName"),
            rm(2, "items", "core.v1.KeyToPath"),
            int32p(3, "defaultMode"),
            bp(4, "optional"),
        ],
    ),
    msg(
        "core.v1.ServiceAccountTokenProjection",
        &[
            s(1, "audience"),
            int64p(2, "expirationSeconds"),
            s(3, "path"),
        ],
    ),
    msg(
        "core.v1.StorageOSPersistentVolumeSource",
        &[
            s(1, "volumeName"),
            s(2, "volumeNamespace"),
            s(3, "fsType"),
            b(4, "readOnly"),
            m(5, "secretRef", "core.v1.ObjectReference"),
        ],
    ),
    msg(
        "core.v1.StorageOSVolumeSource",
        &[
            s(1, "volumeName"),
            s(2, "volumeNamespace"),
            s(3, "fsType"),
            b(4, "readOnly"),
            m(5, "secretRef", "core.v1.LocalObjectReference"),
        ],
    ),
    msg(
        "core.v1.TopologySelectorLabelRequirement",
        &[s(1, "key"), rs(2, "values")],
    ),
    msg(
        "core.v1.TopologySelectorTerm",
        &[rm(
            1,
            "matchLabelExpressions",
            "core.v1.TopologySelectorLabelRequirement",
        )],
    ),
    msg(
        "core.v1.TypedLocalObjectReference",
        &[sp(1, "apiGroup"), s(2, "kind"), s(3, "name")],
    ),
    msg(
        "core.v1.TypedObjectReference",
        &[
            sp(1, "apiGroup"),
            s(2, "kind"),
            s(3, "name"),
            sp(4, "namespace"),
        ],
    ),
    msg(
        "core.v1.Volume",
        &[s(1, "name"), inl(2, "volumeSource", "core.v1.VolumeSource")],
    ),
    msg(
        "core.v1.VolumeNodeAffinity",
        &[m(1, "required", "core.v1.NodeSelector")],
    ),
    msg(
        "core.v1.VolumeProjection",
        &[
            m(1, "secret", "core.v1.SecretProjection"),
            m(2, "downwardAPI", "core.v1.DownwardAPIProjection"),
            m(3, "configMap", "core.v1.ConfigMapProjection"),
            m(
                4,
                "serviceAccountToken",
                "core.v1.ServiceAccountTokenProjection",
            ),
            m(
                5,
                "clusterTrustBundle",
                "core.v1.ClusterTrustBundleProjection",
            ),
            m(6, "podCertificate", "core.v1.PodCertificateProjection"),
        ],
    ),
    msg(
        "core.v1.VolumeResourceRequirements",
        &[msq(1, "limits"), msq(2, "requests")],
    ),
    msg(
        "core.v1.VolumeSource",
        &[
            m(1, "hostPath", "core.v1.HostPathVolumeSource"),
            m(2, "emptyDir", "core.v1.EmptyDirVolumeSource"),
            m(
                3,
                "gcePersistentDisk",
                "core.v1.GCEPersistentDiskVolumeSource",
            ),
            m(
                4,
                "awsElasticBlockStore",
                "core.v1.AWSElasticBlockStoreVolumeSource",
            ),
            m(5, "gitRepo", "core.v1.GitRepoVolumeSource"),
            m(6, "secret", "core.v1.SecretVolumeSource"),
            m(7, "nfs", "core.v1.NFSVolumeSource"),
            m(8, "iscsi", "core.v1.ISCSIVolumeSource"),
            m(9, "glusterfs", "core.v1.GlusterfsVolumeSource"),
            m(
                10,
                "persistentVolumeClaim",
                "core.v1.PersistentVolumeClaimVolumeSource",
            ),
            m(11, "rbd", "core.v1.RBDVolumeSource"),
            m(12, "flexVolume", "core.v1.FlexVolumeSource"),
            m(13, "cinder", "core.v1.CinderVolumeSource"),
            m(14, "cephfs", "core.v1.CephFSVolumeSource"),
            m(15, "flocker", "core.v1.FlockerVolumeSource"),
            m(16, "downwardAPI", "core.v1.DownwardAPIVolumeSource"),
            m(17, "fc", "core.v1.FCVolumeSource"),
            m(18, "azureFile", "core.v1.AzureFileVolumeSource"),
            m(19, "configMap", "core.v1.ConfigMapVolumeSource"),
            m(
                20,
                "vsphereVolume",
                "core.v1.VsphereVirtualDiskVolumeSource",
            ),
            m(21, "quobyte", "core.v1.QuobyteVolumeSource"),
            m(22, "azureDisk", "core.v1.AzureDiskVolumeSource"),
            m(
                23,
                "photonPersistentDisk",
                "core.v1.PhotonPersistentDiskVolumeSource",
            ),
            m(26, "projected", "core.v1.ProjectedVolumeSource"),
            m(24, "portworxVolume", "core.v1.PortworxVolumeSource"),
            m(25, "scaleIO", "core.v1.ScaleIOVolumeSource"),
            m(27, "storageos", "core.v1.StorageOSVolumeSource"),
            m(28, "csi", "core.v1.CSIVolumeSource"),
            m(29, "ephemeral", "core.v1.EphemeralVolumeSource"),
            m(30, "image", "core.v1.ImageVolumeSource"),
        ],
    ),
    msg(
        "core.v1.VsphereVirtualDiskVolumeSource",
        &[
            s(1, "volumePath"),
            s(2, "fsType"),
            s(3, "storagePolicyName"),
            s(4, "storagePolicyID"),
        ],
    ),
    msg(
        "core.v1.PodCertificateProjection",
        &[
            s(1, "signerName"),
            s(2, "keyType"),
            int32p(3, "maxExpirationSeconds"),
            s(4, "credentialBundlePath"),
            s(5, "keyPath"),
            s(6, "certificateChainPath"),
            mss(7, "userAnnotations"),
        ],
    ),
];
