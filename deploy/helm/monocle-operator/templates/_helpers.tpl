{{/* The name of the release's objects: the release name, and the chart's when they differ. */}}
{{- define "monocle-operator.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* The selector labels of the operator's pods. */}}
{{- define "monocle-operator.selectorLabels" -}}
app.kubernetes.io/name: monocle-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end -}}

{{/* The labels of every object of the release. */}}
{{- define "monocle-operator.labels" -}}
{{ include "monocle-operator.selectorLabels" . }}
app.kubernetes.io/part-of: monocle
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The operator's image reference. */}}
{{- define "monocle-operator.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end -}}
