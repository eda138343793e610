{{- define "porta.fullname" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "porta.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}

{{- define "porta.selector" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "porta.secretName" -}}
{{- default (include "porta.fullname" .) .Values.existingSecret -}}
{{- end -}}

{{/* The environment every Porta container gets: the Deployment's and the migration Job's. */}}
{{- define "porta.env" -}}
- name: NODE_ENV
  value: production
- name: PORT
  value: "3000"
- name: BASE_URL
  value: {{ .Values.baseUrl | quote }}
- name: DATA_DIR
  value: {{ .Values.dataDir | quote }}
{{- if .Values.metrics.enabled }}
- name: METRICS_PORT
  value: {{ .Values.metrics.port | quote }}
{{- end }}
{{- range $name, $value := .Values.env }}
{{- if $value }}
- name: {{ $name }}
  value: {{ $value | quote }}
{{- end }}
{{- end }}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef: { name: {{ include "porta.secretName" . }}, key: DATABASE_URL }
- name: ENCRYPTION_KEY
  valueFrom:
    secretKeyRef: { name: {{ include "porta.secretName" . }}, key: ENCRYPTION_KEY }
- name: SMTP_PASS
  valueFrom:
    secretKeyRef: { name: {{ include "porta.secretName" . }}, key: SMTP_PASS, optional: true }
{{- end -}}
