package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/day2"
	"github.com/change-metrics/monocle-operator/pkg/controller/owned"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/monocleconfig"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// configState is the config.yaml a sync works with.
type configState struct {
	// config is what the pods are to run: the config of its source when valid, else (for
	// spec.config) the last valid config held by the ConfigMap, else "" when there is none.
	config string
	// parsed is config parsed, nil when config is "".
	parsed *monocleconfig.Config
	// valid is false when the config of the source was refused.
	valid bool
	// source says where config comes from.
	source monoclev1alpha1.ConfigSource
	// condition is ConfigValid.
	condition metav1.Condition
}

// ensureConfig keeps the ConfigMap "<name>-api" holding config.yaml and returns the config the
// pods are to run. With spec.config set, the operator writes it there (ensureSpecConfig);
// without, the ConfigMap belongs to the user, as with the earlier operator
// (ensureUserConfig). Either way an invalid config is reported in ConfigValid and never
// rolled out.
func (c *Controller) ensureConfig(ctx context.Context, m *monoclev1alpha1.Monocle) (configState, error) {
	if m.Spec.Config == "" {
		return c.ensureUserConfig(ctx, m)
	}
	return c.ensureSpecConfig(ctx, m)
}

// ensureSpecConfig validates spec.config and writes it into the ConfigMap. An invalid config
// is reported and the last valid one, held by the ConfigMap, stays in use: the running Monocle
// is never handed a config it would refuse. When spec.config replaces a config the user kept
// in the ConfigMap (the previous source was the ConfigMap, or an adopted earlier Monocle's),
// that config is kept under resources.ReplacedConfigKey.
func (c *Controller) ensureSpecConfig(ctx context.Context, m *monoclev1alpha1.Monocle) (configState, error) {
	st := configState{source: monoclev1alpha1.ConfigFromSpec}
	want := m.Spec.Config
	if parsed, err := monocleconfig.Parse(want); err == nil {
		st.config, st.parsed, st.valid = want, parsed, true
		st.condition = metav1.Condition{
			Type: monoclev1alpha1.ConditionConfigValid, Status: metav1.ConditionTrue, Reason: reasons.ConfigAccepted,
			Message: fmt.Sprintf("spec.config defines %d workspace(s)", len(parsed.Workspaces)),
		}
	} else {
		st.condition = metav1.Condition{
			Type: monoclev1alpha1.ConditionConfigValid, Status: metav1.ConditionFalse, Reason: reasons.InvalidConfig,
			Message: day2.Truncate("spec.config is not a valid Monocle config, the last valid config stays in use: " + err.Error()),
		}
		if live, err := c.configMaps.Get(m.Namespace, resources.ConfigMapName(m)); err == nil && owned.IsControlledBy(live, m) {
			if last, err := monocleconfig.Parse(live.Data[resources.ConfigKey]); err == nil {
				st.config, st.parsed = live.Data[resources.ConfigKey], last
			}
		}
	}
	if st.config == "" {
		return st, nil
	}
	k := c.configMaps
	if m.Status.ConfigSource != monoclev1alpha1.ConfigFromSpec {
		k = c.configMaps.WithDrift(c.configMaps.Drifted, func(desired, live *corev1.ConfigMap) *corev1.ConfigMap {
			out := c.configMaps.Merge(desired, live)
			if replaced := live.Data[resources.ConfigKey]; replaced != "" && replaced != desired.Data[resources.ConfigKey] {
				out.Data[resources.ReplacedConfigKey] = replaced
			}
			return out
		})
	}
	if _, err := k.Ensure(ctx, c.recorder, m, resources.NewConfigMap(m, st.config)); err != nil {
		st.config, st.parsed = "", nil
		return st, err
	}
	return st, nil
}

// ensureUserConfig returns the config.yaml of the ConfigMap "<name>-api", which belongs to the
// user while spec.config is unset: it is created with resources.DefaultConfig when missing,
// labelled when adopted, and its data is never written. A config Monocle would refuse is
// reported and not rolled out; the running pods keep the config they started with (Monocle
// up to 1.11.2 does not reload a ConfigMap volume), and a pod that restarts meanwhile reads
// the ConfigMap as it is.
func (c *Controller) ensureUserConfig(ctx context.Context, m *monoclev1alpha1.Monocle) (configState, error) {
	st := configState{source: monoclev1alpha1.ConfigFromConfigMap}
	name := resources.ConfigMapName(m)
	cm, err := c.userConfigMaps.Ensure(ctx, c.recorder, m, resources.NewConfigMap(m, resources.DefaultConfig))
	if err != nil {
		st.condition = metav1.Condition{
			Type: monoclev1alpha1.ConditionConfigValid, Status: metav1.ConditionUnknown, Reason: reasons.ConfigMapUnavailable,
			Message: fmt.Sprintf("spec.config is unset and ConfigMap %s, which then holds config.yaml, cannot be read or created", name),
		}
		return st, err
	}
	parsed, err := monocleconfig.Parse(cm.Data[resources.ConfigKey])
	if err != nil {
		st.condition = metav1.Condition{
			Type: monoclev1alpha1.ConditionConfigValid, Status: metav1.ConditionFalse, Reason: reasons.InvalidConfig,
			Message: day2.Truncate(fmt.Sprintf("ConfigMap %s does not hold a valid Monocle config.yaml; the API and crawler are not restarted until it does (a pod that restarts meanwhile reads it): %v",
				name, err)),
		}
		return st, nil
	}
	st.config, st.parsed, st.valid = cm.Data[resources.ConfigKey], parsed, true
	st.condition = metav1.Condition{
		Type: monoclev1alpha1.ConditionConfigValid, Status: metav1.ConditionTrue, Reason: reasons.ConfigAccepted,
		Message: fmt.Sprintf("spec.config is unset; config.yaml of ConfigMap %s defines %d workspace(s)", name, len(parsed.Workspaces)),
	}
	return st, nil
}
