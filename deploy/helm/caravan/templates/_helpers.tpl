{{/* caravan.id is the operator id, refused unless it is a DNS-1123 label. */}}
{{- define "caravan.id" -}}
{{- $id := .Values.operatorId | toString -}}
{{- if or (gt (len $id) 63) (not (regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" $id)) -}}
{{- fail (printf "operatorId %q must be a DNS-1123 label: at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit" $id) -}}
{{- end -}}
{{- $id -}}
{{- end }}

{{/* caravan.default is "true" when the operator is the default one. */}}
{{- define "caravan.default" -}}
{{- if kindIs "invalid" .Values.default -}}
{{- eq (include "caravan.id" .) "camel-k" -}}
{{- else -}}
{{- .Values.default -}}
{{- end -}}
{{- end }}

{{/* caravan.chartLabels are Helm's standard labels, on the metadata of what the chart makes; selectors and the pod template leave them out. */}}
{{- define "caravan.chartLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | trunc 63 | quote }}
{{- end }}

{{- define "caravan.labels" -}}
app.kubernetes.io/instance: {{ include "caravan.id" . }}
app.kubernetes.io/name: caravan-operator
{{- end }}

{{/* caravan.installationLabels mark what this release owns alone (its ServiceAccount, Deployment, metrics Service and RBAC), which uninstall, re-installs and upgrades find by them. */}}
{{- define "caravan.installationLabels" -}}
{{ include "caravan.labels" . }}
caravan.dev/operator-namespace: {{ .Release.Namespace }}
{{- end }}

{{- define "caravan.name" -}}
{{ include "caravan.id" . }}-operator
{{- end }}

{{- define "caravan.clusterName" -}}
caravan:operator:{{ .Release.Namespace }}:{{ include "caravan.id" . }}
{{- end }}

{{- define "caravan.image" -}}
{{- $img := .Values.image -}}
{{- if kindIs "map" $img -}}
{{- $repo := $img.repository | default "caravan/operator" -}}
{{- if $img.digest -}}
{{- printf "%s@%s" $repo $img.digest -}}
{{- else -}}
{{- printf "%s:%s" $repo ($img.tag | default .Chart.AppVersion) -}}
{{- end -}}
{{- else -}}
{{- $img | default (printf "caravan/operator:%s" .Chart.AppVersion) -}}
{{- end -}}
{{- end }}

{{/* caravan.imagePullPolicy is image.pullPolicy, IfNotPresent unless set. */}}
{{- define "caravan.imagePullPolicy" -}}
{{- if kindIs "map" .Values.image -}}
{{- .Values.image.pullPolicy | default "IfNotPresent" -}}
{{- else -}}
IfNotPresent
{{- end -}}
{{- end }}

{{/* caravan.quantity is a resource quantity (64Mi, 500m, 1.5, 2e3) as a number of its unit: bytes, or cores. */}}
{{- define "caravan.quantity" -}}
{{- $re := `^\+?([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:([KMGTPE]i|[numkMGTPE])|[eE]([-+]?[0-9]+))?$` -}}
{{- $q := toString . -}}
{{- $n := float64 (regexReplaceAll $re $q "${1}") -}}
{{- $suffix := regexReplaceAll $re $q "${2}" -}}
{{- $exp := int (regexReplaceAll $re $q "${3}" | default "0") -}}
{{- $times := dict "k" 1e3 "M" 1e6 "G" 1e9 "T" 1e12 "P" 1e15 "E" 1e18
  "Ki" 1024.0 "Mi" 1048576.0 "Gi" 1073741824.0 "Ti" 1099511627776.0 "Pi" 1125899906842624.0 "Ei" 1152921504606846976.0 -}}
{{- $over := dict "n" 1e9 "u" 1e6 "m" 1e3 -}}
{{- if hasKey $times $suffix }}{{ $n = mulf $n (get $times $suffix) }}{{ end -}}
{{- if hasKey $over $suffix }}{{ $n = divf $n (get $over $suffix) }}{{ end -}}
{{- if gt $exp 0 }}{{ range until $exp }}{{ $n = mulf $n 10 }}{{ end }}{{ end -}}
{{- if lt $exp 0 }}{{ range until (sub 0 $exp | int) }}{{ $n = divf $n 10 }}{{ end }}{{ end -}}
{{- $n -}}
{{- end }}

{{/* caravan.checkResources fails when a limit of resources is below its request, which Kubernetes refuses. */}}
{{- define "caravan.checkResources" -}}
{{- $resources := .Values.resources | default dict -}}
{{- $requests := get $resources "requests" | default dict -}}
{{- range $name, $limit := get $resources "limits" | default dict -}}
{{- $request := get $requests $name -}}
{{- if and (not (kindIs "invalid" $limit)) (not (kindIs "invalid" $request)) (ne (toString $request) "") -}}
{{- if lt (float64 (include "caravan.quantity" $limit)) (float64 (include "caravan.quantity" $request)) -}}
{{- fail (printf "resources.limits.%s (%v) is below resources.requests.%s (%v), which Kubernetes refuses: raise the limit or lower the request (the chart requests cpu 100m and memory 64Mi unless told otherwise)" $name $limit $name $request) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end }}
