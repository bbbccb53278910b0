package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// RolloutStatus is where a Monocle stands in the fleet rollout: the operator release whose
// templates its workloads (the Elasticsearch StatefulSet, the API and crawler Deployments)
// were last written with, and how that roll went. A change the operator makes of its own
// accord (a new release's templates, defaults or sidecars) goes out to the Monocles it
// watches in waves behind a canary; a change the Monocle's owner asks for is applied at once.
// docs/fleet-rollouts.md states the rule; the operator derives the fleet's state from these
// fields alone, so a new leader carries on where the last one stopped.
type RolloutStatus struct {
	// Revision is the operator release (such as v0.3.0) whose templates the workloads were
	// last written with. Empty on a Monocle an earlier release ran, which recorded none.
	// +optional
	Revision string `json:"revision,omitempty"`
	// Inputs is a hash of what the Monocle's owner controls (the spec's generation, the
	// operator's annotations, the config, the Secrets and CA bundle the Monocle names, the
	// credentials of its Elasticsearch) at that write: a sync that finds other inputs is the
	// owner's change, which is never held.
	// +optional
	Inputs string `json:"inputs,omitempty"`
	// Phase is Rolling (the operator writes the workloads and waits for the Monocle to be
	// Ready for the soak time), Rolled (done), or Failed (not Ready again within the
	// deadline: the fleet rollout halts, and the operator leaves the workloads as they are,
	// for `kubectl monocle rollout undo`, until the rollout is resumed or the owner changes
	// the Monocle).
	// +optional
	Phase RolloutPhase `json:"phase,omitempty"`
	// Cause says why the workloads were written with Revision: Wave (the fleet rollout's
	// wave named in wave), Owner (a change of the owner's inputs), Created (a new Monocle),
	// NoRestart (the new templates restart no pod: the same templates, or a Monocle whose
	// workloads all run zero replicas).
	// +optional
	Cause RolloutCause `json:"cause,omitempty"`
	// Wave is the wave of the fleet rollout that rolled the Monocle, from 1 (the canary);
	// 0 when another cause did.
	// +optional
	Wave int32 `json:"wave,omitempty"`
	// ReadyBefore is whether the Monocle was Ready when its wave reached it; the fleet waits
	// only for those that were: a Monocle that was not Ready cannot show that the templates
	// work, and never holds the fleet.
	// +optional
	ReadyBefore bool `json:"readyBefore,omitempty"`
	// StartTime is when the operator started writing Revision's templates.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// CompletionTime is when the Monocle had been Ready again for the soak time (Rolled),
	// or when the deadline passed (Failed).
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// Resumed is the last value of RolloutResumeAnnotation the operator acted on.
	// +optional
	Resumed string `json:"resumed,omitempty"`
	// Message says what the Monocle waits for, or why it failed.
	// +optional
	Message string `json:"message,omitempty"`
}

// RolloutPhase is a Monocle's phase in the fleet rollout (RolloutStatus.Phase).
// +kubebuilder:validation:Enum=Rolling;Rolled;Failed
type RolloutPhase string

// Phases of a Monocle's roll to a revision.
const (
	RolloutRolling RolloutPhase = "Rolling"
	RolloutRolled  RolloutPhase = "Rolled"
	RolloutFailed  RolloutPhase = "Failed"
)

// RolloutCause is why a Monocle's workloads were written with a revision
// (RolloutStatus.Cause).
// +kubebuilder:validation:Enum=Wave;Owner;Created;NoRestart
type RolloutCause string

// Causes of a roll.
const (
	RolloutCauseWave      RolloutCause = "Wave"
	RolloutCauseOwner     RolloutCause = "Owner"
	RolloutCauseCreated   RolloutCause = "Created"
	RolloutCauseNoRestart RolloutCause = "NoRestart"
)

// RolloutAnnotation on a Monocle places it in the fleet rollout: "canary" puts it in the
// first waves, ahead of every unmarked Monocle (the first canary alone is the first wave);
// "last" holds it to the last waves, after every other. Other values are ignored.
const RolloutAnnotation = "monocle.change-metrics.io/rollout"

// Values of RolloutAnnotation.
const (
	RolloutCanary = "canary"
	RolloutLast   = "last"
)

// RolloutResumeAnnotation on a Monocle whose roll Failed, set to a new value (`kubectl
// monocle rollout resume` sets the time), resumes the fleet rollout: the operator writes the
// current templates again and waits for the Monocle as for its wave; once it is Ready for the
// soak time, the next waves go on.
const RolloutResumeAnnotation = "monocle.change-metrics.io/rollout-resume"

// ConditionRolloutHeld is True while the operator holds back its own change of the Monocle's
// workloads: the Monocle waits for its wave of the fleet rollout (reason WaitingForWave), the
// rollout is halted by another Monocle's failure (RolloutHalted), or this Monocle's roll
// failed and its workloads are left for undo (RolloutFailed). The message names the wave and
// the Monocles that hold it. Absent otherwise.
const ConditionRolloutHeld = "RolloutHeld"
