// Package result holds the figures of one run of the bench, as it
// writes them to bench.json: the scenarios fill them in, the report
// prints and plots them.
package result

import (
	"time"

	"github.com/google/pprof/profile"

	"github.com/caravan-dev/caravan/internal/bench/measure"
)

// Results are every figure of one run of the bench, as bench.json holds
// them.
type Results struct {
	Machine Machine   `json:"machine"`
	Options Options   `json:"options"`
	Started time.Time `json:"started"`
	Seconds float64   `json:"seconds"`
	Rollout *Rollout  `json:"rollout,omitempty"`
	Share   *Share    `json:"share,omitempty"`
	Handoff *Handoff  `json:"handoff,omitempty"`
	Build   *Build    `json:"build,omitempty"`
	// Runtime is integrations as real JVMs against the same route started directly.
	Runtime *Runtime `json:"runtime,omitempty"`
	// Nodes are the local cluster's nodes measured side by side.
	Nodes *Nodes `json:"nodes,omitempty"`
	// Admission is the admission policies' cost against the number of
	// operators.
	Admission *Admission `json:"admission,omitempty"`
	// Recovery is an operator's recovery from a kill during a burst.
	Recovery *Recovery `json:"recovery,omitempty"`
	// Malformed is bad input created beside valid input.
	Malformed *Malformed `json:"malformed,omitempty"`
	// SweepIntegrations and SweepOperators are the rollout at each N, and
	// at each M, of the sweeps.
	SweepIntegrations []SweepPoint `json:"sweepIntegrations,omitempty"`
	SweepOperators    []SweepPoint `json:"sweepOperators,omitempty"`
	// SweepCPULimits is the rollout at each CPU limit of the operators.
	SweepCPULimits []SweepPoint `json:"sweepCPULimits,omitempty"`
	// SweepRunAs is the rollout with the operators as pods, then as host processes.
	SweepRunAs []SweepPoint      `json:"sweepRunAs,omitempty"`
	Failures   map[string]string `json:"failures,omitempty"`
}

// Recovery is an operator killed (its pod deleted with no grace period)
// when half of a burst of integrations are created.
type Recovery struct {
	Operator     string `json:"operator"`
	Integrations int    `json:"integrations"`
	// ReadyAtKill integrations were Ready KilledAfterSeconds after the
	// burst began, when the pod was killed; all were Ready
	// RecoverySeconds after the kill, with Deployments Deployments.
	ReadyAtKill        int     `json:"readyAtKill"`
	KilledAfterSeconds float64 `json:"killedAfterSeconds"`
	RecoverySeconds    float64 `json:"recoverySeconds"`
	Deployments        int     `json:"deployments"`
}

// Malformed is what bad input costs the valid input beside it: valid
// integrations created alone, then as many again created in one burst
// with as many malformed ones.
type Malformed struct {
	Operator string       `json:"operator"`
	Alone    MalformedRun `json:"alone"`
	Beside   MalformedRun `json:"beside"`
	// Ratio is the valid integrations' all-Ready time beside the
	// malformed ones over their time alone.
	Ratio float64 `json:"ratio"`
}

// MalformedRun is one burst of Valid valid and Malformed malformed
// integrations for one operator.
type MalformedRun struct {
	Valid     int `json:"valid"`
	Malformed int `json:"malformed"`
	// ValidReadySeconds is the time from the burst's start to every valid
	// one Ready; MalformedStalledSeconds to every malformed one Stalled.
	ValidReadySeconds       float64 `json:"validReadySeconds"`
	MalformedStalledSeconds float64 `json:"malformedStalledSeconds,omitempty"`
	// WithReason malformed ones have Ready=False with the reason their
	// malformation names; ByReason counts them by reason. Wrong names up
	// to ten that do not, and what they have.
	WithReason int            `json:"withReason"`
	ByReason   map[string]int `json:"byReason,omitempty"`
	Wrong      []string       `json:"wrong,omitempty"`
	// Deployments is how many Deployments the namespace held once all
	// were done: one per valid integration, none for a malformed one.
	Deployments int `json:"deployments"`
	// Restarts of the operator's container during the run.
	Restarts int `json:"restarts"`
	// CPUSeconds and Reconciles of Integrations are the operator's over
	// the burst; QuietReconciles over the QuietSeconds after it, when
	// nothing changed (a busy loop on bad input would show there).
	CPUSeconds      float64 `json:"cpuSeconds"`
	Reconciles      float64 `json:"reconciles"`
	QuietSeconds    float64 `json:"quietSeconds"`
	QuietReconciles float64 `json:"quietReconciles"`
	// IdleOwnMiB is the operator's own memory before the burst,
	// PeakOwnMiB its peak during it.
	IdleOwnMiB float64 `json:"idleOwnMiB"`
	PeakOwnMiB float64 `json:"peakOwnMiB"`
}

// Admission is what the admission policies cost the API server on each
// create of an assigned Integration, against the number of operators
// they know (no operator running).
type Admission struct {
	// Creates is how many Integrations each point creates in one burst.
	Creates int              `json:"creates"`
	Points  []AdmissionPoint `json:"points"`
}

// AdmissionPoint is one burst of creates with Operators registrations,
// limited to a namespace each (with a namespaces binding each) or not.
type AdmissionPoint struct {
	Operators int  `json:"operators"`
	Limited   bool `json:"limited"`
	// Registrations are all the IntegrationOperators of the cluster: the
	// parameters of the policies that take every operator's.
	Registrations int `json:"registrations"`
	// CreateSeconds is the burst's time; APIServerMillisPerCreate and
	// EtcdMillisPerCreate the CPU each process used over it, a create.
	CreateSeconds            float64 `json:"createSeconds"`
	APIServerMillisPerCreate float64 `json:"apiServerMillisPerCreate"`
	EtcdMillisPerCreate      float64 `json:"etcdMillisPerCreate"`
}

// SweepPoint is one rollout of a sweep, with Caravan, the bare operator
// and the floor measured side by side.
type SweepPoint struct {
	Integrations int `json:"integrations"`
	Operators    int `json:"operators"`
	// CPULimit is the operators' CPU limit, in a sweep over it.
	CPULimit string `json:"cpuLimit,omitempty"`
	// RunAs says how the operators ran, "pods" or "processes", in a sweep over it.
	RunAs string `json:"runAs,omitempty"`
	// FloorSeconds, CaravanSeconds and BareSeconds are the all-ready
	// times; Ratio and BareRatio are over the floor's.
	FloorSeconds   float64 `json:"floorSeconds"`
	CaravanSeconds float64 `json:"caravanSeconds"`
	BareSeconds    float64 `json:"bareSeconds"`
	Ratio          float64 `json:"ratio"`
	BareRatio      float64 `json:"bareRatio"`
	// CaravanCreateSeconds and FloorCreateSeconds are the creation bursts.
	CaravanCreateSeconds float64 `json:"caravanCreateSeconds"`
	FloorCreateSeconds   float64 `json:"floorCreateSeconds"`
	// CPUMillisPerIntegration is all operators' CPU over the rollout per
	// integration. When the point ran several times it is the median of
	// the runs' (it varies from run to run apart from the time; the other
	// figures are the median run's). HeapKiBPerIntegration is their summed
	// peak heaps per integration; RSSMiBPerOperator their mean peak RSS,
	// and OwnMiBPerOperator their mean peak own (anonymous) memory;
	// IdleOwnMiBPerOperator is their mean own memory before the rollout,
	// owning nothing.
	CPUMillisPerIntegration float64 `json:"cpuMillisPerIntegration"`
	HeapKiBPerIntegration   float64 `json:"heapKiBPerIntegration"`
	RSSMiBPerOperator       float64 `json:"rssMiBPerOperator"`
	OwnMiBPerOperator       float64 `json:"ownMiBPerOperator,omitempty"`
	IdleOwnMiBPerOperator   float64 `json:"idleOwnMiBPerOperator,omitempty"`
	// WatchEventsPerIntegration and BareWatchEventsPerIntegration are the
	// events the API server sent its watchers in the Caravan and the bare
	// operator's phases, all resources, per integration.
	WatchEventsPerIntegration     float64 `json:"watchEventsPerIntegration,omitempty"`
	BareWatchEventsPerIntegration float64 `json:"bareWatchEventsPerIntegration,omitempty"`
	// Runs are the times of every run of the point, in order, when it ran
	// more than once; the figures above are the median run's.
	Runs []RolloutRun `json:"runs,omitempty"`
}

// Options record what was asked of the run.
type Options struct {
	Scenarios    []string `json:"scenarios"`
	Integrations int      `json:"integrations"`
	Operators    int      `json:"operators"`
	RolloutRuns  int      `json:"rolloutRuns"`
	Share        [2]int   `json:"share"`
	ShareN       int      `json:"shareIntegrations"`
	// SkipAdmission is set when the operators ran without the admission
	// policies.
	SkipAdmission bool `json:"skipAdmission,omitempty"`
	// RolloutFlows is set when the rollout's integrations had flows.
	RolloutFlows bool `json:"rolloutFlows,omitempty"`
	// ProfileOperators is set when the operators were profiled over the
	// rollout: their CPU figures then include what the profiling cost.
	ProfileOperators bool `json:"profileOperators,omitempty"`
	// SweepIntegrations and SweepOperators are the sweeps asked for.
	SweepIntegrations  []int    `json:"sweepIntegrations,omitempty"`
	SweepOperators     []int    `json:"sweepOperators,omitempty"`
	SweepCPULimits     []string `json:"sweepCPULimits,omitempty"`
	SweepHostProcesses bool     `json:"sweepHostProcesses,omitempty"`
}

// Machine describes where the figures come from.
type Machine struct {
	CPUs      int    `json:"cpus"`
	CPUModel  string `json:"cpuModel"`
	MemoryGiB int    `json:"memoryGiB"`
	GoVersion string `json:"goVersion"`
	OS        string `json:"os"`
}

// Rollout holds the rollout scenario's figures.
type Rollout struct {
	Integrations int `json:"integrations"`
	Operators    int `json:"operators"`
	// AdmissionPolicies tells whether the API server mirrored the
	// operator-id label (the policies of `caravan install`) or the
	// operators did.
	AdmissionPolicies bool `json:"admissionPolicies"`
	// Flows tells whether the integrations had flows (a ConfigMap each)
	// rather than being sourceless pre-built images.
	Flows bool `json:"flows,omitempty"`
	// FloorSeconds and CaravanSeconds run from the start of the creation
	// burst to the moment the last object was ready; Ratio is Caravan's
	// over the floor's.
	FloorSeconds   float64 `json:"floorSeconds"`
	CaravanSeconds float64 `json:"caravanSeconds"`
	Ratio          float64 `json:"ratio"`
	// Bare is the same rollout, in the same run, of integrations run by
	// the bare operator: the least an operator can do (see
	// internal/bench/bareoperator).
	Bare BareRollout `json:"bare"`
	// Runs are the times of every run, in order, when the rollout ran
	// more than once; the other figures are those of the run whose ratio
	// is the median.
	Runs []RolloutRun `json:"runs,omitempty"`
	// FloorCreateSeconds and CaravanCreateSeconds are how long the bursts
	// of creations took.
	FloorCreateSeconds   float64 `json:"floorCreateSeconds"`
	CaravanCreateSeconds float64 `json:"caravanCreateSeconds"`
	// WritesByKind are all operators' writes per integration, by "verb
	// resource", from the API server's audit log.
	WritesByKind map[string]float64        `json:"writesByKind"`
	PerOperator  []measure.OperatorFigures `json:"perOperator"`
	All          measure.OperatorFigures   `json:"all"`
	FloorCurve   []measure.Point           `json:"floorCurve"`
	CaravanCurve []measure.Point           `json:"caravanCurve"`
	// FloorControlPlaneCPU and CaravanControlPlaneCPU are the CPU
	// seconds each process of the local cluster (etcd, kube-apiserver,
	// ...) used from the burst until all were ready.
	FloorControlPlaneCPU   map[string]float64 `json:"floorControlPlaneCPU"`
	CaravanControlPlaneCPU map[string]float64 `json:"caravanControlPlaneCPU"`
	// FloorBenchCPU and CaravanBenchCPU are the CPU seconds the bench
	// itself (its watches and clients) used over the same periods, on the
	// same cores.
	FloorBenchCPU   float64 `json:"floorBenchCPU"`
	CaravanBenchCPU float64 `json:"caravanBenchCPU"`
	// DeploymentsCurve is when the Deployments that Caravan made rolled
	// out, in the same run: the gap to CaravanCurve is the time the
	// operators took to see it and report the integrations Ready.
	DeploymentsCurve []measure.Point `json:"deploymentsCurve"`
	// APIServerCPUByWork splits the API server's CPU over the same periods by kind of work.
	// It comes from its CPU profiles, written next to bench.json as apiserver-floor.pprof,
	// apiserver-bare.pprof and apiserver-caravan.pprof; the operators' merged profiles of the
	// Caravan phase are operators-caravan.pprof.
	APIServerCPUByWork []measure.WorkShare `json:"apiServerCPUByWork"`
	// FloorWatchEvents and CaravanWatchEvents are the events the API server sent its watchers.
	// They are apiserver_watch_events_total over the same periods, per integration, by resource
	// ("pods", "integrations.camel.apache.org"); the bench's own watches of the phase's
	// Deployments and Integrations are among them.
	FloorWatchEvents   map[string]float64 `json:"floorWatchEvents,omitempty"`
	CaravanWatchEvents map[string]float64 `json:"caravanWatchEvents,omitempty"`
	// FloorProfile, BareProfile and CaravanProfile are the API server's
	// CPU profiles of the three phases, OperatorsProfile the operators'
	// of the Caravan phase. They are written as files of their own, not
	// into bench.json.
	FloorProfile     *profile.Profile `json:"-"`
	BareProfile      *profile.Profile `json:"-"`
	CaravanProfile   *profile.Profile `json:"-"`
	OperatorsProfile *profile.Profile `json:"-"`
}

// BareRollout is the rollout's phase run by the bare operator.
type BareRollout struct {
	// Seconds runs from the start of the burst to the moment the last
	// integration was Ready; Ratio is over the floor's.
	Seconds float64 `json:"seconds"`
	Ratio   float64 `json:"ratio"`
	// DeploymentsSeconds is when the last of its Deployments had rolled
	// out, DeploymentsRatio the same over the floor's.
	DeploymentsSeconds float64 `json:"deploymentsSeconds"`
	DeploymentsRatio   float64 `json:"deploymentsRatio"`
	CreateSeconds      float64 `json:"createSeconds"`
	// WritesByKind are the bare operator's writes per integration, by
	// "verb resource[/subresource]", from the API server's audit log.
	WritesByKind map[string]float64 `json:"writesByKind"`
	Curve        []measure.Point    `json:"curve"`
	// ControlPlaneCPU is by process; BenchCPU is the bench's own, the
	// bare operator's included (it runs in the bench).
	ControlPlaneCPU map[string]float64 `json:"controlPlaneCPU"`
	BenchCPU        float64            `json:"benchCPU"`
	// WatchEvents are as the rollout's CaravanWatchEvents, in this phase.
	WatchEvents map[string]float64 `json:"watchEvents,omitempty"`
}

// RolloutRun is what one run of the rollout took.
type RolloutRun struct {
	FloorSeconds   float64 `json:"floorSeconds"`
	CaravanSeconds float64 `json:"caravanSeconds"`
	Ratio          float64 `json:"ratio"`
	BareSeconds    float64 `json:"bareSeconds"`
	BareRatio      float64 `json:"bareRatio"`
	// OperatorsCPUSeconds is all operators' CPU over Caravan's phase.
	OperatorsCPUSeconds float64 `json:"operatorsCPUSeconds,omitempty"`
}

// Share holds the share scenario's figures.
type Share struct {
	Integrations int    `json:"integrations"`
	Split        [2]int `json:"split"`
	// Operators are the two sharing operators, then the one that owns
	// all after the reassignment.
	Operators   []ShareHeap `json:"operators"`
	IdleHeapMiB float64     `json:"idleHeapMiB"`
	// SmallOverAll is the heap of the operator with the smaller share
	// over the heap of the one owning all.
	SmallOverAll float64 `json:"smallOverAll"`
	// KiBPerIntegration is (heap owning all - idle heap) / integrations.
	KiBPerIntegration float64 `json:"kibPerIntegration"`
}

// ShareHeap is one operator's steady-state heap with its share.
type ShareHeap struct {
	ID      string  `json:"id"`
	Owned   int     `json:"owned"`
	HeapMiB float64 `json:"heapMiB"`
}

// Handoff holds the hand-off scenario's figures.
type Handoff struct {
	Integrations int    `json:"integrations"`
	Replicas     int32  `json:"replicas"`
	From         string `json:"from"`
	To           string `json:"to"`
	// MoveSeconds is, per integration, the time from its annotation patch
	// to being owned by To, Ready, with its Deployment applied by To and
	// rolled out.
	MoveSeconds  measure.Distribution `json:"moveSeconds"`
	MoveTimes    []float64            `json:"moveTimes"`
	TotalSeconds float64              `json:"totalSeconds"`
	// AdoptSeconds is, per integration, the time from its annotation
	// patch to being owned by To (the release by From and the adoption):
	// the rest of a move is To's apply of the children and its status.
	AdoptSeconds measure.Distribution `json:"adoptSeconds"`
	// FloorMoveSeconds is the least a move can cost. As many bare
	// Deployments with the same pod template are given the change a move
	// makes to an integration's Deployment (its operator-id label) in one
	// burst; per Deployment, it is the time from its patch until a watch
	// shows it. FloorMoveTimes holds the times and P99Ratio is Caravan's
	// p99 over the floor's.
	FloorMoveSeconds measure.Distribution `json:"floorMoveSeconds"`
	FloorMoveTimes   []float64            `json:"floorMoveTimes"`
	P99Ratio         float64              `json:"p99Ratio"`
	// MinReadyPods is the fewest ready (not terminating) pods any moved
	// integration had during the move, seen on a pod watch. PodsStarted
	// is the pods created during the moves: a move does not change what
	// the pods run, so it restarts none.
	MinReadyPods int32 `json:"minReadyPods"`
	PodsStarted  int   `json:"podsStarted"`
	// ReleaseWrites and WritesByFromAfterRelease are the old owner's writes after each move.
	// They are read from the API server's audit log, by its own identity, to the moved
	// integrations, their children and Events after each one's annotation patch: those of the
	// release itself (the status write recording it and the label handover, at most two per
	// integration), and all others, which the handover promises are none.
	ReleaseWrites            int `json:"releaseWrites"`
	WritesByFromAfterRelease int `json:"writesByFromAfterRelease"`
	// WritesByFromAfterReleaseByKind splits the latter by "verb resource".
	WritesByFromAfterReleaseByKind map[string]int `json:"writesByFromAfterReleaseByKind,omitempty"`
	// SettleSeconds is how long the old owner's writes are counted after
	// the last move. FromWritesSettled is its write requests (all
	// resources, rest_client_requests_total) in that time, and
	// FromWritesIdle the same over as long before the burst; the
	// difference is what the moves cost it afterwards.
	SettleSeconds     float64 `json:"settleSeconds"`
	FromWritesSettled float64 `json:"fromWritesSettled"`
	FromWritesIdle    float64 `json:"fromWritesIdle"`
}

// Build holds the build scenario's figures: kits Maven built in builder
// pods, one at a time, then a burst of integrations over dependency sets.
type Build struct {
	// Kits are the kits built one at a time, in order: cold and cached,
	// on the base image and on another kit.
	Kits           []KitBuild `json:"kits"`
	Integrations   int        `json:"integrations"`
	DependencySets int        `json:"dependencySets"`
	// Builds is how many Builds the operator created for the burst.
	Builds int `json:"builds"`
	// Seconds runs from the creation burst to the last integration Ready.
	Seconds      float64              `json:"seconds"`
	BuildSeconds measure.Distribution `json:"buildSeconds"`
	Curve        []measure.Point      `json:"curve"`
	// Move is the integrations' move to a second operator, in one burst.
	// That operator's kits for the same sets wrap the images the pods run
	// (MoveKitsAdopted of them), so it builds none (MoveBuilds) and no pod
	// rolls.
	Move            *Handoff `json:"move,omitempty"`
	MoveBuilds      int      `json:"moveBuilds"`
	MoveKitsAdopted int      `json:"moveKitsAdopted"`
	// Catalog is the install of the Kamelet catalog of the operator's Camel version.
	Catalog *Catalog `json:"catalog,omitempty"`
}

// Catalog times an operator's install of the Kamelet catalog: Seconds from the platform's change
// to KameletCatalogAvailable (the catalog kit's build included), ApplySeconds for the apply of its
// Kamelets alone.
type Catalog struct {
	Seconds      float64 `json:"seconds"`
	ApplySeconds float64 `json:"applySeconds"`
	Kamelets     int     `json:"kamelets"`
	Message      string  `json:"message"`
}

// Runtime holds the runtime scenario's figures, each beside the floor. They are the seconds from
// the apply to an integration's first message, and an idle integration's memory and CPU; the
// floor is the same route on the same jars and Java started directly on the machine.
type Runtime struct {
	Integrations int `json:"integrations"`
	StartFigures
	// Heap is the -Xmx the jvm trait set from MemoryLimit ("" for none).
	Heap        string `json:"heap,omitempty"`
	MemoryLimit string `json:"memoryLimit,omitempty"`
	// KitArchive is what the kit says of its class-data-sharing archive; ArchiveUsed tells that
	// the integration's JVM mapped it (it logged no refusal).
	KitArchive  string `json:"kitArchive,omitempty"`
	ArchiveUsed bool   `json:"archiveUsed,omitempty"`
	// ArchivedFloorSeconds is the floor started from an archive made as a kit's is (the same
	// training start, on its own paths); ArchivedFloorRatio the existing kit's p50 over it.
	ArchivedFloorSeconds measure.Distribution `json:"archivedFloorSeconds"`
	ArchivedFloorRatio   float64              `json:"archivedFloorRatio,omitempty"`
	// Move is the running integrations' canary to an operator that makes the same kits: its
	// kits wrap the images the pods run, which keep running. Roll is their canary on to an
	// operator of another base image, which builds its own kits, to which the pods roll.
	Move *RuntimeMove `json:"move,omitempty"`
	Roll *RuntimeMove `json:"roll,omitempty"`
	// Quarkus are the same figures of the quarkus provider, measured in the same run.
	Quarkus *ProviderRuntime `json:"quarkus,omitempty"`
}

// ProviderRuntime are a runtime provider's figures, measured as Runtime's: its kits' builds to
// the first message, n integrations on the kit that exists against its own floor (the same
// application and Java started directly), and an idle integration's memory and CPU.
type ProviderRuntime struct {
	Provider       string `json:"provider"`
	RuntimeVersion string `json:"runtimeVersion"`
	StartFigures
}

// StartFigures are a runtime's starts and idle figures, each beside its floor's.
type StartFigures struct {
	// ColdSeconds: a kit of one component built with an empty Maven cache; WarmSeconds: one
	// more dependency on that kit, the cache warm; ExistingSeconds: integrations on that kit.
	ColdSeconds     float64              `json:"coldSeconds"`
	WarmSeconds     float64              `json:"warmSeconds"`
	ExistingSeconds measure.Distribution `json:"existingSeconds"`
	// FloorSeconds is the floor's start to its first message; Ratio the existing kit's p50
	// over the floor's.
	FloorSeconds measure.Distribution `json:"floorSeconds"`
	Ratio        float64              `json:"ratio"`
	// Idle and FloorIdle are an idle integration's JVM and the floor's; RSSRatio theirs.
	Idle      Idle    `json:"idle"`
	FloorIdle Idle    `json:"floorIdle"`
	RSSRatio  float64 `json:"rssRatio"`
}

// RuntimeMove is a canary of running JVMs from one operator to another, wave after wave.
type RuntimeMove struct {
	From         string `json:"from"`
	To           string `json:"to"`
	Integrations int    `json:"integrations"`
	// WaveSeconds run from a wave's first patch to its last integration Running under To;
	// MoveTimes from an integration's patch to it Running under To, in the order moved.
	WaveSeconds  []float64            `json:"waveSeconds"`
	TotalSeconds float64              `json:"totalSeconds"`
	MoveTimes    []float64            `json:"moveTimes"`
	MoveSeconds  measure.Distribution `json:"moveSeconds"`
	// Builds To created, and the kits of To that wrap a kit image of From's.
	Builds      int `json:"builds"`
	KitsAdopted int `json:"kitsAdopted"`
	// PodsStarted during the moves, Restarts of the containers of the pods kept, and the
	// fewest ready pods an integration had.
	PodsStarted  int `json:"podsStarted"`
	Restarts     int `json:"restarts"`
	MinReadyPods int `json:"minReadyPods"`
	// LostTicks are the timer counts missing from the kept pods' logs; Gaps say where, and
	// name a log with no tick after its move.
	LostTicks int      `json:"lostTicks"`
	Gaps      []string `json:"gaps,omitempty"`
}

// Idle is a JVM's resident memory and CPU while its route idles.
type Idle struct {
	RSSMiB        float64 `json:"rssMiB"`
	CPUMillicores float64 `json:"cpuMillicores"`
}

// KitBuild is one kit built alone, as its Build tells it.
type KitBuild struct {
	Case         string   `json:"case"`
	Dependencies []string `json:"dependencies,omitempty"`
	// Seconds is the Build's duration; ReadySeconds runs from the
	// integration's creation to its kit Ready.
	Seconds      float64 `json:"seconds"`
	ReadySeconds float64 `json:"readySeconds"`
	// Jars the kit holds, AddedJars of them in its own layer, on Parent
	// ("" for the base image).
	Jars      int    `json:"jars"`
	AddedJars int    `json:"addedJars"`
	Parent    string `json:"parent,omitempty"`
	// DownloadedFiles and DownloadedBytes are what Maven downloaded.
	DownloadedFiles int   `json:"downloadedFiles"`
	DownloadedBytes int64 `json:"downloadedBytes"`
	// Layers is the kit image's layer count, LayersReused of them the
	// very layers of the image it was built on.
	Layers       int `json:"layers"`
	LayersReused int `json:"layersReused"`
}

// Nodes are the local cluster's two nodes of real pods, the process node and the kubelet node,
// measured one after the other in the same run.
type Nodes struct {
	Integrations int           `json:"integrations"`
	Nodes        []NodeFigures `json:"nodes"`
}

// NodeFigures are one node's: a full cluster's start with it, the idle cost of the node's own
// processes (not its pods'), and integrations' first messages on it.
type NodeFigures struct {
	Node string `json:"node"`
	// Skipped says why the node was not measured, "" when it was.
	Skipped string `json:"skipped,omitempty"`
	// UpSeconds runs from the start of a full local cluster to ready (the cache warm).
	UpSeconds float64 `json:"upSeconds"`
	// IdleRSSMiB is each node process's resident memory, by name, with no pod running;
	// IdleAnonymousMiB the part of it that is its own, not its executable's and other files'
	// pages; IdleCPUMillicores their CPU together.
	IdleRSSMiB        map[string]float64 `json:"idleRSSMiB"`
	IdleAnonymousMiB  map[string]float64 `json:"idleAnonymousMiB,omitempty"`
	IdleCPUMillicores float64            `json:"idleCPUMillicores"`
	// KitSeconds is the first message of an integration whose kit is built, the Maven cache
	// empty; ExistingSeconds of integrations on that kit, one at a time.
	KitSeconds      float64              `json:"kitSeconds"`
	ExistingSeconds measure.Distribution `json:"existingSeconds"`
}

// Total is the sum of a figure of the node's processes, by name.
func Total(byProcess map[string]float64) float64 {
	var sum float64
	for _, v := range byProcess {
		sum += v
	}
	return measure.Round3(sum)
}
