package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	_ "time/tzdata" // CronJob time zones

	"github.com/robfig/cron/v3"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// kustomization is the part of kustomize's Kustomization the kit uses; decoded strictly, so a
// field outside it is reported rather than ignored.
type kustomization struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Labels     []struct {
		Pairs            map[string]string `json:"pairs"`
		IncludeSelectors bool              `json:"includeSelectors,omitempty"`
		IncludeTemplates bool              `json:"includeTemplates,omitempty"`
	} `json:"labels,omitempty"`
	Resources []string `json:"resources"`
	Images    []struct {
		Name    string `json:"name"`
		NewName string `json:"newName,omitempty"`
		NewTag  string `json:"newTag,omitempty"`
		Digest  string `json:"digest,omitempty"`
	} `json:"images,omitempty"`
}

// object is one decoded manifest document.
type object struct {
	file   string
	listed bool // in the kustomization's resources
	obj    runtime.Object
}

func (o object) meta() metav1.Object {
	m, _ := o.obj.(metav1.Object)
	return m
}

func (o object) String() string {
	return fmt.Sprintf("%s: %s %s", o.file, o.obj.GetObjectKind().GroupVersionKind().Kind, o.meta().GetName())
}

// workload is a pod template and where it comes from.
type workload struct {
	owner    object
	labels   map[string]string
	spec     *corev1.PodSpec
	replicas *int32
}

type kube struct {
	p        *problems
	objects  []object
	defaults config
	bin      string
}

func kubeCmd(args []string, p *problems) error {
	fs := newFlags("kube")
	bin := fs.String("hrsync", "", "hrsync binary to run the containers' command lines and configuration through")
	defaultsPath := fs.String("defaults", "config.yaml", "the repository's config.yaml")
	_ = fs.Parse(args)
	if fs.NArg() != 1 {
		usage()
	}
	dir := fs.Arg(0)
	defaults, err := loadDefaults(*defaultsPath)
	if err != nil {
		return err
	}
	k := &kube{p: p, defaults: defaults, bin: *bin}

	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, batchv1.AddToScheme,
		autoscalingv2.AddToScheme, policyv1.AddToScheme, networkingv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return err
		}
	}
	decoder := serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()

	files, err := filepath.Glob(filepath.Join(dir, "*.y*ml"))
	if err != nil {
		return err
	}
	var kust *kustomization
	var kustText string
	for _, f := range files {
		if base := filepath.Base(f); base == "kustomization.yaml" || base == "kustomization.yml" {
			data, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			kust, kustText = new(kustomization), string(data)
			if err := yaml.UnmarshalStrict(data, kust); err != nil {
				p.addf("%s: %v", base, err)
			}
			continue
		}
		k.decodeFile(f, decoder)
	}
	if kust == nil {
		p.addf("%s: no kustomization.yaml", dir)
	} else {
		k.checkKustomization(dir, kust, kustText)
	}
	fmt.Printf("ok: decoded %d objects from %d files strictly into the Kubernetes API types (k8s.io/api)\n", len(k.objects), len(files))
	k.checkObjects()
	return nil
}

// decodeFile decodes every document of a file; strict: unknown and duplicate fields fail.
func (k *kube) decodeFile(path string, decoder runtime.Decoder) {
	f, err := os.Open(path)
	if err != nil {
		k.p.addf("%v", err)
		return
	}
	defer f.Close()
	r := k8syaml.NewYAMLReader(bufio.NewReader(f))
	n := 0
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			k.p.addf("%s: %v", filepath.Base(path), err)
			return
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		n++
		obj, gvk, err := decoder.Decode(doc, nil, nil)
		if err != nil {
			k.p.addf("%s (document %d): %v", filepath.Base(path), n, err)
			continue
		}
		if gvk.Version == "" || gvk.Kind == "" {
			k.p.addf("%s (document %d): no apiVersion or kind", filepath.Base(path), n)
			continue
		}
		k.objects = append(k.objects, object{file: filepath.Base(path), obj: obj})
	}
	if n == 0 {
		k.p.addf("%s: no Kubernetes object", filepath.Base(path))
	}
}

func stripComments(doc []byte) []byte {
	var out []byte
	for line := range bytes.Lines(doc) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' {
			out = append(out, line...)
		}
	}
	return out
}

func (k *kube) checkKustomization(dir string, kust *kustomization, text string) {
	p := k.p
	if kust.APIVersion != "kustomize.config.k8s.io/v1beta1" || kust.Kind != "Kustomization" {
		p.addf("kustomization.yaml: apiVersion/kind %s/%s", kust.APIVersion, kust.Kind)
	}
	if kust.Namespace != "" {
		p.addf("kustomization.yaml: sets namespace %q; the kit is namespace-agnostic", kust.Namespace)
	}
	for _, l := range kust.Labels {
		checkLabels("kustomization.yaml labels", l.Pairs, p)
	}
	listed := map[string]bool{}
	for _, r := range kust.Resources {
		if _, err := os.Stat(filepath.Join(dir, r)); err != nil {
			p.addf("kustomization.yaml: resource %s: %v", r, err)
		}
		if listed[r] {
			p.addf("kustomization.yaml: resource %s listed twice", r)
		}
		listed[r] = true
	}
	for i := range k.objects {
		k.objects[i].listed = listed[k.objects[i].file]
	}
	// Files not listed are alternatives or examples: the kustomization must say so.
	files := map[string]bool{}
	for _, o := range k.objects {
		files[o.file] = true
	}
	for f := range files {
		if !listed[f] && !strings.Contains(text, f) {
			p.addf("%s is neither listed in kustomization.yaml nor explained there", f)
		}
	}
	images := map[string]bool{}
	for _, im := range kust.Images {
		images[im.Name] = true
		if im.NewTag == "latest" || (im.NewTag == "" && im.Digest == "") {
			p.addf("kustomization.yaml: image %s: pin a tag or digest (not latest)", im.Name)
		}
	}
	for _, w := range k.workloads() {
		if !w.owner.listed {
			continue
		}
		for _, c := range allContainers(w.spec) {
			if !images[c.Image] {
				p.addf("%s: container %s: image %q is not set by the kustomization's images", w.owner, c.Name, c.Image)
			}
		}
	}
	fmt.Printf("ok: kustomization.yaml: %d resources; unlisted files explained\n", len(kust.Resources))
}

// workloads are the pod templates of Deployments, Jobs and CronJobs.
func (k *kube) workloads() []workload {
	var ws []workload
	for _, o := range k.objects {
		switch obj := o.obj.(type) {
		case *appsv1.Deployment:
			ws = append(ws, workload{o, obj.Spec.Template.Labels, &obj.Spec.Template.Spec, obj.Spec.Replicas})
		case *batchv1.Job:
			ws = append(ws, workload{o, obj.Spec.Template.Labels, &obj.Spec.Template.Spec, nil})
		case *batchv1.CronJob:
			t := &obj.Spec.JobTemplate.Spec.Template
			ws = append(ws, workload{o, t.Labels, &t.Spec, nil})
		}
	}
	return ws
}

func allContainers(spec *corev1.PodSpec) []*corev1.Container {
	var cs []*corev1.Container
	for i := range spec.InitContainers {
		cs = append(cs, &spec.InitContainers[i])
	}
	for i := range spec.Containers {
		cs = append(cs, &spec.Containers[i])
	}
	return cs
}

func (k *kube) find(kind, name string) (object, bool) {
	for _, o := range k.objects {
		if o.obj.GetObjectKind().GroupVersionKind().Kind == kind && o.meta().GetName() == name {
			return o, true
		}
	}
	return object{}, false
}

// selects returns the workloads whose pods a selector picks.
func (k *kube) selects(sel labels.Selector) []workload {
	var ws []workload
	for _, w := range k.workloads() {
		if sel.Matches(labels.Set(w.labels)) {
			ws = append(ws, w)
		}
	}
	return ws
}

func (k *kube) checkObjects() {
	p := k.p
	seen := map[string]bool{}
	for _, o := range k.objects {
		m := o.meta()
		id := o.obj.GetObjectKind().GroupVersionKind().Kind + "/" + m.GetName()
		if seen[id] {
			p.addf("%s: defined twice", o)
		}
		seen[id] = true
		for _, e := range validation.IsDNS1123Subdomain(m.GetName()) {
			p.addf("%s: name: %s", o, e)
		}
		if m.GetNamespace() != "" {
			p.addf("%s: sets namespace %q; the kit is namespace-agnostic", o, m.GetNamespace())
		}
		checkLabels(o.String()+" labels", m.GetLabels(), p)
		checkAnnotations(o.String(), m.GetAnnotations(), p)

		switch obj := o.obj.(type) {
		case *appsv1.Deployment:
			k.checkSelector(o, obj.Spec.Selector, obj.Spec.Template.Labels)
			if obj.Spec.Replicas != nil && *obj.Spec.Replicas < 1 {
				p.addf("%s: replicas %d", o, *obj.Spec.Replicas)
			}
			k.checkPod(o, &obj.Spec.Template.ObjectMeta, &obj.Spec.Template.Spec, false)
		case *batchv1.CronJob:
			if _, err := cron.ParseStandard(obj.Spec.Schedule); err != nil {
				p.addf("%s: schedule %q: %v", o, obj.Spec.Schedule, err)
			}
			if tz := obj.Spec.TimeZone; tz != nil {
				if _, err := time.LoadLocation(*tz); err != nil {
					p.addf("%s: timeZone %q: %v", o, *tz, err)
				}
			}
			if obj.Spec.ConcurrencyPolicy != batchv1.ForbidConcurrent {
				p.addf("%s: concurrencyPolicy %q: want Forbid (a sync must not overlap another)", o, obj.Spec.ConcurrencyPolicy)
			}
			t := &obj.Spec.JobTemplate.Spec.Template
			if rp := t.Spec.RestartPolicy; rp != corev1.RestartPolicyNever && rp != corev1.RestartPolicyOnFailure {
				p.addf("%s: restartPolicy %q: a Job's pods need Never or OnFailure", o, rp)
			}
			k.checkPod(o, &t.ObjectMeta, &t.Spec, true)
		case *batchv1.Job:
			t := &obj.Spec.Template
			if rp := t.Spec.RestartPolicy; rp != corev1.RestartPolicyNever && rp != corev1.RestartPolicyOnFailure {
				p.addf("%s: restartPolicy %q: a Job's pods need Never or OnFailure", o, rp)
			}
			k.checkPod(o, &t.ObjectMeta, &t.Spec, true)
		case *corev1.Service:
			k.checkService(o, obj)
		case *autoscalingv2.HorizontalPodAutoscaler:
			k.checkHPA(o, obj)
		case *policyv1.PodDisruptionBudget:
			if (obj.Spec.MinAvailable == nil) == (obj.Spec.MaxUnavailable == nil) {
				p.addf("%s: set exactly one of minAvailable and maxUnavailable", o)
			}
			sel := k.checkSelector(o, obj.Spec.Selector, nil)
			if sel != nil && len(k.selects(sel)) == 0 {
				p.addf("%s: selects no pods of the kit", o)
			}
		case *corev1.ConfigMap:
			for key := range obj.Data {
				for _, e := range validation.IsConfigMapKey(key) {
					p.addf("%s: key %q: %s", o, key, e)
				}
			}
		case *corev1.Secret:
			for key, v := range obj.StringData {
				for _, e := range validation.IsConfigMapKey(key) {
					p.addf("%s: key %q: %s", o, key, e)
				}
				if !strings.Contains(v, "REPLACE-ME") {
					p.addf("%s: %s holds a value without the REPLACE-ME placeholder: never commit a real secret", o, key)
				}
			}
			if len(obj.Data) > 0 {
				p.addf("%s: use stringData with REPLACE-ME placeholders, not data", o)
			}
			if o.listed {
				p.addf("%s: an example Secret must not be in the kustomization (apply -k would overwrite the real one)", o)
			}
		}
	}
	if !p.any() {
		fmt.Println("ok: names, labels, selectors, ports, probes, ConfigMap/Secret references, HPA target, PDBs, CronJob schedule")
	}
}

func checkLabels(where string, m map[string]string, p *problems) {
	for key, v := range m {
		for _, e := range validation.IsQualifiedName(key) {
			p.addf("%s: label key %q: %s", where, key, e)
		}
		for _, e := range validation.IsValidLabelValue(v) {
			p.addf("%s: label %s value %q: %s", where, key, v, e)
		}
	}
}

func checkAnnotations(where string, m map[string]string, p *problems) {
	for key := range m {
		for _, e := range validation.IsQualifiedName(strings.ToLower(key)) {
			p.addf("%s: annotation key %q: %s", where, key, e)
		}
	}
}

// checkSelector checks that a selector is valid, non-empty and (given the template's labels)
// matches them.
func (k *kube) checkSelector(o object, ls *metav1.LabelSelector, template map[string]string) labels.Selector {
	if ls == nil || (len(ls.MatchLabels) == 0 && len(ls.MatchExpressions) == 0) {
		k.p.addf("%s: empty selector", o)
		return nil
	}
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		k.p.addf("%s: selector: %v", o, err)
		return nil
	}
	if template != nil && !sel.Matches(labels.Set(template)) {
		k.p.addf("%s: selector %s does not match the pod template's labels %v", o, sel, template)
	}
	return sel
}

// checkPod checks a pod template: the restricted Pod Security Standard and the kit's own rules
// (read-only root, resources, no service account token), references to volumes, ConfigMaps and
// Secrets, probes against ports, and each hrsync container's command line.
func (k *kube) checkPod(o object, meta *metav1.ObjectMeta, spec *corev1.PodSpec, isJob bool) {
	p := k.p
	checkLabels(o.String()+" pod labels", meta.Labels, p)
	checkAnnotations(o.String()+" pod", meta.Annotations, p)
	if spec.HostNetwork || spec.HostPID || spec.HostIPC {
		p.addf("%s: host namespaces", o)
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		p.addf("%s: automountServiceAccountToken: false (hrsync never talks to the API server)", o)
	}
	psc := spec.SecurityContext
	if psc == nil {
		psc = &corev1.PodSecurityContext{}
	}
	if psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
		p.addf("%s: securityContext.runAsNonRoot must be true", o)
	}
	if psc.RunAsUser != nil && *psc.RunAsUser == 0 {
		p.addf("%s: runAsUser 0", o)
	}
	podSeccomp := psc.SeccompProfile != nil && psc.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault

	volumes := map[string]*corev1.Volume{}
	for i := range spec.Volumes {
		v := &spec.Volumes[i]
		if volumes[v.Name] != nil {
			p.addf("%s: volume %s twice", o, v.Name)
		}
		volumes[v.Name] = v
		for _, e := range validation.IsDNS1123Label(v.Name) {
			p.addf("%s: volume %q: %s", o, v.Name, e)
		}
		switch {
		case v.HostPath != nil:
			p.addf("%s: volume %s: hostPath is not allowed (restricted)", o, v.Name)
		case v.ConfigMap != nil:
			k.checkRef(o, "ConfigMap", v.ConfigMap.Name, keysOf(v.ConfigMap.Items))
		case v.Secret != nil:
			k.checkRef(o, "Secret", v.Secret.SecretName, keysOf(v.Secret.Items))
		case v.EmptyDir != nil, v.PersistentVolumeClaim != nil, v.Projected != nil:
		default:
			p.addf("%s: volume %s: a kind the kit does not expect", o, v.Name)
		}
	}
	used := map[string]bool{}
	names := map[string]bool{}
	for _, c := range allContainers(spec) {
		where := fmt.Sprintf("%s container %s", o, c.Name)
		for _, e := range validation.IsDNS1123Label(c.Name) {
			p.addf("%s: name: %s", where, e)
		}
		if names[c.Name] {
			p.addf("%s: name used twice", where)
		}
		names[c.Name] = true
		if c.Image == "" {
			p.addf("%s: no image", where)
		}
		// Restricted Pod Security Standard.
		sc := c.SecurityContext
		if sc == nil {
			p.addf("%s: no securityContext", where)
			continue
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			p.addf("%s: allowPrivilegeEscalation must be false", where)
		}
		if sc.Privileged != nil && *sc.Privileged {
			p.addf("%s: privileged", where)
		}
		if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
			p.addf("%s: capabilities must drop ALL", where)
		} else if len(sc.Capabilities.Add) > 0 {
			p.addf("%s: adds capabilities %v; hrsync needs none", where, sc.Capabilities.Add)
		}
		if !podSeccomp && (sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault) {
			p.addf("%s: seccompProfile RuntimeDefault (pod or container)", where)
		}
		if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			p.addf("%s: readOnlyRootFilesystem must be true", where)
		}
		if sc.RunAsUser != nil && *sc.RunAsUser == 0 {
			p.addf("%s: runAsUser 0", where)
		}
		// Resources: requests for scheduling (and the HPA), a memory limit.
		req, lim := c.Resources.Requests, c.Resources.Limits
		if req.Cpu().IsZero() || req.Memory().IsZero() {
			p.addf("%s: set cpu and memory requests", where)
		}
		if lim.Memory().IsZero() {
			p.addf("%s: set a memory limit", where)
		}
		for name, l := range lim {
			if r, ok := req[name]; ok && r.Cmp(l) > 0 {
				p.addf("%s: %s request %s exceeds its limit %s", where, name, r.String(), l.String())
			}
		}
		// Ports and probes.
		ports := map[string]int32{}
		numbers := map[int32]bool{}
		for _, port := range c.Ports {
			if port.Name != "" {
				for _, e := range validation.IsValidPortName(port.Name) {
					p.addf("%s: port name %q: %s", where, port.Name, e)
				}
				if _, dup := ports[port.Name]; dup {
					p.addf("%s: port name %q twice", where, port.Name)
				}
				ports[port.Name] = port.ContainerPort
			}
			for _, e := range validation.IsValidPortNum(int(port.ContainerPort)) {
				p.addf("%s: port %d: %s", where, port.ContainerPort, e)
			}
			numbers[port.ContainerPort] = true
		}
		for what, pr := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe, "startup": c.StartupProbe} {
			if pr == nil {
				continue
			}
			if pr.HTTPGet == nil {
				p.addf("%s: %s probe: hrsync has HTTP health endpoints; use httpGet", where, what)
				continue
			}
			if pr.HTTPGet.Path != "/healthz" && pr.HTTPGet.Path != "/readyz" {
				p.addf("%s: %s probe path %q: hrsync answers /healthz and /readyz", where, what, pr.HTTPGet.Path)
			}
			if !portResolves(pr.HTTPGet.Port, ports, numbers) {
				p.addf("%s: %s probe port %s is not a port of the container", where, what, pr.HTTPGet.Port.String())
			}
		}
		if !isJob && isMain(spec, c) && c.ReadinessProbe == nil {
			p.addf("%s: no readiness probe", where)
		}
		// References.
		for _, m := range c.VolumeMounts {
			if volumes[m.Name] == nil {
				p.addf("%s: volumeMount %s: no such volume", where, m.Name)
			}
			used[m.Name] = true
		}
		for _, e := range c.Env {
			for _, msg := range validation.IsEnvVarName(e.Name) {
				p.addf("%s: env %q: %s", where, e.Name, msg)
			}
			if vf := e.ValueFrom; vf != nil {
				if r := vf.SecretKeyRef; r != nil {
					k.checkRef(o, "Secret", r.Name, []string{r.Key})
				}
				if r := vf.ConfigMapKeyRef; r != nil {
					k.checkRef(o, "ConfigMap", r.Name, []string{r.Key})
				}
			}
		}
		for _, ef := range c.EnvFrom {
			if ef.SecretRef != nil {
				k.checkRef(o, "Secret", ef.SecretRef.Name, nil)
			}
			if ef.ConfigMapRef != nil {
				k.checkRef(o, "ConfigMap", ef.ConfigMapRef.Name, nil)
			}
		}
		if c.Image == "hrsync" {
			k.checkHrsync(o, spec, c, ports)
		}
	}
	for name := range volumes {
		if !used[name] {
			p.addf("%s: volume %s is mounted by no container", o, name)
		}
	}
}

func keysOf(items []corev1.KeyToPath) []string {
	var ks []string
	for _, it := range items {
		ks = append(ks, it.Key)
	}
	return ks
}

func portResolves(port intstr.IntOrString, names map[string]int32, numbers map[int32]bool) bool {
	if port.Type == intstr.String {
		_, ok := names[port.StrVal]
		return ok
	}
	return numbers[port.IntVal]
}

// checkRef checks that a ConfigMap or Secret the kit refers to is in the kit with those keys.
func (k *kube) checkRef(o object, kind, name string, keys []string) {
	ref, ok := k.find(kind, name)
	if !ok {
		k.p.addf("%s: refers to %s %q, which is not in the kit", o, kind, name)
		return
	}
	have := k.data(ref)
	for _, key := range keys {
		if _, ok := have[key]; !ok {
			k.p.addf("%s: refers to key %q of %s %q, which has no such key", o, key, kind, name)
		}
	}
}

// data is a ConfigMap's or Secret's keys and values.
func (k *kube) data(o object) map[string]string {
	m := map[string]string{}
	switch obj := o.obj.(type) {
	case *corev1.ConfigMap:
		for key, v := range obj.Data {
			m[key] = v
		}
	case *corev1.Secret:
		for key, v := range obj.Data {
			m[key] = string(v)
		}
		for key, v := range obj.StringData {
			m[key] = v
		}
	}
	return m
}

// checkHrsync runs an hrsync container's command line and configuration through the
// invocation checks: the file from its mounted ConfigMap, its environment with the Secret's
// placeholders, and the ports it declares.
func (k *kube) checkHrsync(o object, spec *corev1.PodSpec, c *corev1.Container, ports map[string]int32) {
	where := fmt.Sprintf("%s container %s", o, c.Name)
	if len(c.Command) > 0 {
		k.p.addf("%s: command overrides the image's ENTRYPOINT (hrsync); give args only", where)
	}
	inv := invocation{Where: where, Args: c.Args, Env: map[string]string{}, Files: map[string]string{}, Ports: map[string]int{}}
	for _, e := range c.Env {
		v := e.Value
		if vf := e.ValueFrom; vf != nil {
			switch {
			case vf.SecretKeyRef != nil:
				if ref, ok := k.find("Secret", vf.SecretKeyRef.Name); ok {
					v = k.data(ref)[vf.SecretKeyRef.Key]
				}
			case vf.ConfigMapKeyRef != nil:
				if ref, ok := k.find("ConfigMap", vf.ConfigMapKeyRef.Name); ok {
					v = k.data(ref)[vf.ConfigMapKeyRef.Key]
				}
			}
		}
		inv.Env[e.Name] = v
	}
	for _, ef := range c.EnvFrom {
		var ref object
		var ok bool
		if ef.SecretRef != nil {
			ref, ok = k.find("Secret", ef.SecretRef.Name)
		} else if ef.ConfigMapRef != nil {
			ref, ok = k.find("ConfigMap", ef.ConfigMapRef.Name)
		}
		if ok {
			for key, v := range k.data(ref) {
				inv.Env[ef.Prefix+key] = v
			}
		}
	}
	for _, m := range c.VolumeMounts {
		for _, v := range spec.Volumes {
			if v.Name != m.Name || v.ConfigMap == nil {
				continue
			}
			if ref, ok := k.find("ConfigMap", v.ConfigMap.Name); ok {
				for key, content := range k.data(ref) {
					inv.Files[filepath.Join(m.MountPath, key)] = content
				}
			}
		}
	}
	if n, ok := ports["metrics"]; ok {
		inv.Ports["metrics"] = int(n)
	}
	if n, ok := ports["http"]; ok {
		inv.Ports["serve"] = int(n)
	}
	// The worker needs time to stop: a sync rolls back, then the servers drain.
	if slices.Contains(c.Args, "run") && isMain(spec, c) {
		need := int64((stopTimeout + shutdownTimeout) / time.Second)
		if g := spec.TerminationGracePeriodSeconds; g == nil || *g < need {
			k.p.addf("%s: terminationGracePeriodSeconds must be at least %d (hrsync run stops in up to %s + %s)", where, need, stopTimeout, shutdownTimeout)
		}
	}
	checkInvocation(inv, k.defaults, k.bin, k.p)
}

func (k *kube) checkService(o object, s *corev1.Service) {
	p := k.p
	for _, e := range validation.IsDNS1035Label(s.Name) {
		p.addf("%s: a Service name must be a DNS-1035 label: %s", o, e)
	}
	if len(s.Spec.Selector) == 0 {
		p.addf("%s: no selector", o)
		return
	}
	ws := k.selects(labels.SelectorFromSet(s.Spec.Selector))
	if len(ws) == 0 {
		p.addf("%s: selector %v matches no pods of the kit", o, s.Spec.Selector)
		return
	}
	for _, sp := range s.Spec.Ports {
		for _, e := range validation.IsValidPortNum(int(sp.Port)) {
			p.addf("%s: port %d: %s", o, sp.Port, e)
		}
		target := sp.TargetPort
		if target.Type == intstr.Int && target.IntVal == 0 {
			target = intstr.FromInt32(sp.Port)
		}
		for _, w := range ws {
			found := false
			for _, c := range w.spec.Containers {
				names, numbers := map[string]int32{}, map[int32]bool{}
				for _, cp := range c.Ports {
					names[cp.Name], numbers[cp.ContainerPort] = cp.ContainerPort, true
				}
				found = found || portResolves(target, names, numbers)
			}
			if !found {
				p.addf("%s: targetPort %s is not a container port of %s", o, target.String(), w.owner)
			}
		}
	}
}

func (k *kube) checkHPA(o object, h *autoscalingv2.HorizontalPodAutoscaler) {
	p := k.p
	ref := h.Spec.ScaleTargetRef
	target, ok := k.find(ref.Kind, ref.Name)
	if !ok || ref.APIVersion != "apps/v1" {
		p.addf("%s: scaleTargetRef %s %s %s is not in the kit", o, ref.APIVersion, ref.Kind, ref.Name)
		return
	}
	min := int32(1)
	if h.Spec.MinReplicas != nil {
		min = *h.Spec.MinReplicas
	}
	if min < 1 || h.Spec.MaxReplicas < min {
		p.addf("%s: minReplicas %d, maxReplicas %d", o, min, h.Spec.MaxReplicas)
	}
	d, ok := target.obj.(*appsv1.Deployment)
	if !ok {
		return
	}
	if d.Spec.Replicas != nil {
		p.addf("%s: %s sets replicas, which every apply would reset under the autoscaler", o, target)
	}
	if len(h.Spec.Metrics) == 0 {
		p.addf("%s: no metrics", o)
	}
	for _, m := range h.Spec.Metrics {
		if m.Type != autoscalingv2.ResourceMetricSourceType || m.Resource == nil {
			continue
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			if q, ok := c.Resources.Requests[m.Resource.Name]; !ok || q.Cmp(resource.Quantity{}) == 0 {
				p.addf("%s: scales on %s utilization but container %s of %s requests none", o, m.Resource.Name, c.Name, target)
			}
		}
		if t := m.Resource.Target; t.Type == autoscalingv2.UtilizationMetricType && (t.AverageUtilization == nil || *t.AverageUtilization <= 0) {
			p.addf("%s: utilization target missing", o)
		}
	}
}

// isMain says whether c is one of the pod's main containers (not an init container).
func isMain(spec *corev1.PodSpec, c *corev1.Container) bool {
	for i := range spec.Containers {
		if &spec.Containers[i] == c {
			return true
		}
	}
	return false
}
