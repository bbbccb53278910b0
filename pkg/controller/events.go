package controller

// Reasons of the events the controller records on Monocles. They are CamelCase and stable:
// alerts and scripts may match on them.
const (
	// ReasonCreated: the operator created an owned object.
	ReasonCreated = "Created"
	// ReasonUpdated: the operator updated an owned object that differed from the desired state.
	ReasonUpdated = "Updated"
	// ReasonNameConflict: an object with a name the Monocle needs exists and is not controlled
	// by it; the operator leaves it unchanged.
	ReasonNameConflict = "NameConflict"
	// ReasonKeyGenerated: a generated key was missing from the Secret and was generated anew.
	ReasonKeyGenerated = "KeyGenerated"
	// ReasonSyncFailed: a sync step failed; the message carries the error.
	ReasonSyncFailed = "SyncFailed"
	// ReasonReady: the Monocle became Ready.
	ReasonReady = "Ready"
	// ReasonNotReady: the Monocle stopped being Ready.
	ReasonNotReady = "NotReady"
)

// ReasonDeleted: the operator deleted an owned object it no longer needs.
const ReasonDeleted = "Deleted"
