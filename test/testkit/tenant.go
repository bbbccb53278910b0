package testkit

import (
	"context"
	"fmt"
	"time"
)

// TenantUser is the user a tenant of namespace acts as: "tenant-<namespace>", a team that
// holds Kubernetes' "edit" ClusterRole in that namespace and nothing elsewhere.
func TenantUser(namespace string) string { return "tenant-" + namespace }

// Tenant binds Kubernetes' default "edit" ClusterRole (which deploy/02-rbac-aggregated.yaml
// extends to Monocles) to TenantUser(namespace) in namespace, and returns admin acting as
// that user through impersonation: what a team with edit in its own namespace can do, and
// nothing more. It returns once the API server grants that user the creation of Monocles
// in namespace (kubectl auth can-i, for up to 30 s): RBAC takes in a new RoleBinding, and
// the aggregation controller deploy/02-rbac-aggregated.yaml's rules, asynchronously. The
// namespace must exist; binding twice is harmless. Its error includes kubectl's output.
func Tenant(ctx context.Context, admin Kubectl, namespace string) (Kubectl, error) {
	user := TenantUser(namespace)
	binding := fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: %s-edit
  namespace: %s
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: edit
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: User
  name: %s
`, user, namespace, user)
	if out, err := admin.RunStdin(ctx, binding, "apply", "-f", "-"); err != nil {
		return Kubectl{}, fmt.Errorf("granting edit in %s to %s: %v: %s", namespace, user, err, out)
	}
	tenant := admin
	tenant.As = user
	err := Poll(ctx, 100*time.Millisecond, 30*time.Second, user+" may create Monocles in "+namespace, func(ctx context.Context) error {
		if out, err := tenant.Run(ctx, "auth", "can-i", "create", "monocles.monocle.monocle.change-metrics.io", "-n", namespace); err != nil {
			return fmt.Errorf("kubectl auth can-i: %v: %s", err, out)
		}
		return nil
	})
	return tenant, err
}
