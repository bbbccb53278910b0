package localcluster

import (
	"context"
	"errors"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// userAgent is what this package's requests carry, so they can be told
// apart in the audit log.
const userAgent = "localcluster"

// connect writes the admin kubeconfig and builds c.client from it. The
// kubeconfig verifies the API server against its self-signed certificate
// (certs/apiserver.crt) when a request made that way succeeds, and skips
// verification otherwise.
func (c *Cluster) connect(ctx context.Context) error {
	c.kubeconfig = c.path("kubeconfig")
	ca, err := os.ReadFile(c.path(apiServerCert))
	if err == nil {
		if err = c.useKubeconfig(ca); err == nil {
			err = c.client.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).Error()
		}
		if err == nil {
			c.caPEM = ca
			return nil
		}
	}
	c.logf("serving certificate does not verify (%v): kubeconfig skips TLS verification", err)
	return c.useKubeconfig(nil)
}

// useKubeconfig writes the kubeconfig, verifying the server with the PEM
// bundle ca (or not at all if ca is nil), and loads c.client from it.
func (c *Cluster) useKubeconfig(ca []byte) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["localcluster"] = &clientcmdapi.Cluster{
		Server:                   c.apiURL,
		CertificateAuthorityData: ca,
		InsecureSkipTLSVerify:    ca == nil,
	}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: AdminToken}
	cfg.Contexts["localcluster"] = &clientcmdapi.Context{Cluster: "localcluster", AuthInfo: "admin", Namespace: "default"}
	cfg.CurrentContext = "localcluster"
	if err := clientcmd.WriteToFile(*cfg, c.kubeconfig); err != nil {
		return err
	}
	rest, err := clientcmd.BuildConfigFromFlags("", c.kubeconfig)
	if err != nil {
		return err
	}
	rest.UserAgent = userAgent
	rest.Timeout = 10 * time.Second
	c.client, err = kubernetes.NewForConfig(rest)
	return err
}

// created is a waitFor check's result for a create: done when the object
// was created or already exists.
func created(_ any, err error) (bool, error) {
	return err == nil || apierrors.IsAlreadyExists(err), err
}

// nodeReady reports whether the fake node is Ready; it also removes the
// node.kubernetes.io/not-ready taint that admission adds to new nodes (the
// node-lifecycle controller that would lift it is disabled).
func (c *Cluster) nodeReady(ctx context.Context) (bool, error) {
	node, err := c.client.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	var keep []corev1.Taint
	for _, t := range node.Spec.Taints {
		if t.Key != corev1.TaintNodeNotReady {
			keep = append(keep, t)
		}
	}
	if len(keep) != len(node.Spec.Taints) {
		node.Spec.Taints = keep
		_, err := c.client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{})
		return false, err // look again
	}
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
			return true, nil
		}
	}
	return false, errors.New("node not Ready yet (is kwok managing it?)")
}

// storageClass is the same object as kwok's
// kustomize/stage/volume/fast/storage-class.yaml.
func storageClass() *storagev1.StorageClass {
	reclaim, binding := corev1.PersistentVolumeReclaimDelete, storagev1.VolumeBindingImmediate
	return &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{
			Name:        StorageClassName,
			Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"},
		},
		Provisioner:       "kwok.x-k8s.io/volume",
		ReclaimPolicy:     &reclaim,
		VolumeBindingMode: &binding,
	}
}

// fakeNode is the node kwok manages, with generous capacity. Nodes keep their
// status on create; kwok fills in the rest.
func fakeNode() *corev1.Node {
	resources := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("32"),
		corev1.ResourceMemory:           resource.MustParse("256Gi"),
		corev1.ResourcePods:             resource.MustParse("1000"),
		corev1.ResourceEphemeralStorage: resource.MustParse("1Ti"),
	}
	key, value, _ := strings.Cut(FakeNodeAnnotation, "=")
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: NodeName,
			Annotations: map[string]string{
				key:                            value,
				"node.alpha.kubernetes.io/ttl": "0",
			},
			Labels: map[string]string{
				"kubernetes.io/arch":            "amd64",
				"kubernetes.io/hostname":        NodeName,
				"kubernetes.io/os":              "linux",
				"kubernetes.io/role":            "agent",
				"node-role.kubernetes.io/agent": "",
				"type":                          "kwok",
			},
		},
		Status: corev1.NodeStatus{
			Allocatable: resources,
			Capacity:    resources,
			NodeInfo:    corev1.NodeSystemInfo{Architecture: "amd64", OperatingSystem: "linux"},
		},
	}
}
