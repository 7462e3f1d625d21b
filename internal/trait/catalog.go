package trait

import (
	"encoding/json"
	"slices"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// commonProperties are what every Camel K trait takes.
var commonProperties = []string{"enabled", "configuration"}

// camelKProperties are the properties of Camel K 2.x's traits that Caravan acts on, as its
// Integration CRD names them. Caravan reads some and keeps the others as written.
var camelKProperties = map[string][]string{
	"affinity": {"nodeAffinityLabels", "podAffinity", "podAffinityLabels", "podAntiAffinity", "podAntiAffinityLabels"},
	"builder": {"annotations", "baseImage", "incrementalImageBuild", "limitCPU", "limitMemory", "mavenProfiles", "nodeSelector",
		"orderStrategy", "platforms", "properties", "requestCPU", "requestMemory", "strategy", "tasks", "tasksFilter",
		"tasksLimitCPU", "tasksLimitMemory", "tasksRequestCPU", "tasksRequestMemory", "verbose"},
	"camel": {"properties", "runtimeProvider", "runtimeVersion"},
	"container": {"allowPrivilegeEscalation", "auto", "capabilitiesAdd", "capabilitiesDrop", "expose", "image", "imagePullPolicy",
		"limitCPU", "limitMemory", "name", "port", "portName", "ports", "requestCPU", "requestMemory", "runAsNonRoot", "runAsUser",
		"seccompProfileType", "servicePort", "servicePortName"},
	"cron": {"activeDeadlineSeconds", "auto", "backoffLimit", "components", "concurrencyPolicy", "fallback", "schedule",
		"startingDeadlineSeconds", "timeZone"},
	"deployment":  {"progressDeadlineSeconds", "rollingUpdateMaxSurge", "rollingUpdateMaxUnavailable", "strategy"},
	"environment": {"containerMeta", "httpProxy", "vars"},
	"health": {"livenessFailureThreshold", "livenessInitialDelay", "livenessPeriod", "livenessPort", "livenessProbe",
		"livenessProbeEnabled", "livenessScheme", "livenessSuccessThreshold", "livenessTimeout",
		"readinessFailureThreshold", "readinessInitialDelay", "readinessPeriod", "readinessPort", "readinessProbe",
		"readinessProbeEnabled", "readinessScheme", "readinessSuccessThreshold", "readinessTimeout",
		"startupFailureThreshold", "startupInitialDelay", "startupPeriod", "startupPort", "startupProbe",
		"startupProbeEnabled", "startupScheme", "startupSuccessThreshold", "startupTimeout"},
	"ingress": {"annotations", "auto", "host", "ingressClassName", "path", "pathType", "paths", "tlsHosts", "tlsSecretName"},
	"jvm": {"agents", "baseTruststore", "caCert", "caCertMountPath", "caCertPassword", "caCertificates", "certPath", "classpath",
		"debug", "debugAddress", "debugSuspend", "jar", "options", "passwordPath", "printCommand", "truststorePasswordPath",
		"truststorePath"},
	"kamelets":    {"auto", "list", "mountPoint"},
	"mount":       {"configs", "emptyDirs", "hotReload", "resources", "scanKameletsImplicitLabelSecrets", "volumes"},
	"owner":       {"targetAnnotations", "targetLabels"},
	"pdb":         {"maxUnavailable", "minAvailable"},
	"prometheus":  {"podMonitor", "podMonitorLabels"},
	"pull-secret": {"auto", "imagePullerDelegation", "secretName"},
	"service":     {"annotations", "auto", "labels", "nodePort", "ports", "type"},
	"toleration":  {"taints"},
}

// UnknownProperties are the properties t sets on the traits Caravan acts on that Camel K's trait
// of that name does not have, as TRAIT.PROPERTY, sorted: typos, which Camel K's operator refuses.
func UnknownProperties(t camelv1.Traits) []string {
	var unknown []string
	for name, raw := range t {
		known, acted := camelKProperties[name]
		if !acted {
			continue
		}
		var props map[string]json.RawMessage
		if json.Unmarshal(raw.JSON.Raw, &props) != nil {
			continue // not an object: Parse says so
		}
		for p := range props {
			if !slices.Contains(known, p) && !slices.Contains(commonProperties, p) {
				unknown = append(unknown, name+"."+p)
			}
		}
	}
	slices.Sort(unknown)
	return unknown
}

// Properties are the properties Camel K's trait name takes, sorted, and whether Caravan knows them.
func Properties(name string) ([]string, bool) {
	known, ok := camelKProperties[name]
	if !ok {
		return nil, false
	}
	return slices.Sorted(slices.Values(append(slices.Clone(commonProperties), known...))), true
}
