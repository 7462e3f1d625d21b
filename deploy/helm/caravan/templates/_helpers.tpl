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
