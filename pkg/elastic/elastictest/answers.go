package elastictest

// Answers of Elasticsearch 7.17 for a Server to reply with. YellowHealth is the Cluster
// health API's documented example (fixture cluster-health): a single node holding one index
// whose replica cannot be assigned. GreenHealth and RedHealth are a one-node cluster holding
// Monocle's two indices, all active or one primary missing, and Allocation80 and
// Allocation90 its one data node's disk, a volume of 10 GiB whose indices take 50 MiB, 80%
// and 90% full (cat allocation API, format=json, bytes=b). Each has the JSON shape of its
// fixture (cluster-health, cat-allocation), which the package's tests check.
var YellowHealth = MustFixture("cluster-health").Body

// See YellowHealth.
const (
	GreenHealth  = `{"cluster_name":"docker-cluster","status":"green","timed_out":false,"number_of_nodes":1,"number_of_data_nodes":1,"active_primary_shards":2,"active_shards":2,"relocating_shards":0,"initializing_shards":0,"unassigned_shards":0,"delayed_unassigned_shards":0,"number_of_pending_tasks":0,"number_of_in_flight_fetch":0,"task_max_waiting_in_queue_millis":0,"active_shards_percent_as_number":100.0}`
	RedHealth    = `{"cluster_name":"docker-cluster","status":"red","timed_out":false,"number_of_nodes":1,"number_of_data_nodes":1,"active_primary_shards":1,"active_shards":1,"relocating_shards":0,"initializing_shards":0,"unassigned_shards":1,"delayed_unassigned_shards":0,"number_of_pending_tasks":0,"number_of_in_flight_fetch":0,"task_max_waiting_in_queue_millis":0,"active_shards_percent_as_number":50.0}`
	Allocation80 = `[{"shards":"2","disk.indices":"52428800","disk.used":"8589934592","disk.avail":"2147483648","disk.total":"10737418240","disk.percent":"80","host":"10.244.0.12","ip":"10.244.0.12","node":"m-elastic-0"}]`
	Allocation90 = `[{"shards":"2","disk.indices":"52428800","disk.used":"9663676416","disk.avail":"1073741824","disk.total":"10737418240","disk.percent":"90","host":"10.244.0.12","ip":"10.244.0.12","node":"m-elastic-0"}]`
)
