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

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/intstr"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	psapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"sigs.k8s.io/yaml"
)

// The Kubernetes checks. Generic ones are left to tools: the schema to strict decoding into
// k8s.io/api's types, the restricted Pod Security Standard to k8s.io/pod-security-admission
// (the admission controller's own checks), and resources, selectors, Services, HPA and PDBs
// to kube-score (deploy/check.sh runs it). What stays here is hrsync's: the kustomization's
// list and image, the Secret's placeholders, and each hrsync container's command line,
// configuration, probes, ports and stop time, run through the invocation checks.

// kustomization is the part of kustomize's Kustomization the kit uses; decoded strictly, so a
// field outside it is reported rather than ignored.
type kustomization struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
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

type kube struct {
	p        *problems
	objects  []object
	defaults config
	bin      string
	psa      policy.Evaluator
}

func kubeCmd(args []string, p *problems) error {
	fs := newFlags("kube")
	bin, defaultsPath := hrsyncFlags(fs, "the containers' command lines and configuration")
	dir := oneArg(fs, args)
	defaults, err := loadDefaults(*defaultsPath)
	if err != nil {
		return err
	}
	return checkKube(dir, defaults, *bin, p)
}

// checkKube checks the manifests of dir.
func checkKube(dir string, defaults config, bin string, p *problems) error {
	psa, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		return err
	}
	k := &kube{p: p, defaults: defaults, bin: bin, psa: psa}
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
	fmt.Fprintf(out, "ok: decoded %d objects from %d files strictly into the Kubernetes API types (k8s.io/api)\n", len(k.objects), len(files))
	if kust == nil {
		p.addf("%s: no kustomization.yaml", dir)
	} else {
		k.checkKustomization(dir, kust, kustText)
	}
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

// checkKustomization: every listed file exists, every file not listed is explained (an
// alternative or an example), and every hrsync image is pinned by the kustomization.
func (k *kube) checkKustomization(dir string, kust *kustomization, text string) {
	p := k.p
	listed := map[string]bool{}
	for _, r := range kust.Resources {
		if _, err := os.Stat(filepath.Join(dir, r)); err != nil {
			p.addf("kustomization.yaml: resource %s: %v", r, err)
		}
		listed[r] = true
	}
	for i := range k.objects {
		k.objects[i].listed = listed[k.objects[i].file]
		if f := k.objects[i].file; !listed[f] && !strings.Contains(text, f) {
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
	for _, o := range k.objects {
		if _, spec, _ := podOf(o); spec != nil && o.listed {
			for _, c := range allContainers(spec) {
				if !images[c.Image] {
					p.addf("%s: container %s: image %q is not set by the kustomization's images", o, c.Name, c.Image)
				}
			}
		}
	}
}

// podOf is the pod template of a Deployment, Job or CronJob; isJob for the last two.
func podOf(o object) (*metav1.ObjectMeta, *corev1.PodSpec, bool) {
	switch obj := o.obj.(type) {
	case *appsv1.Deployment:
		return &obj.Spec.Template.ObjectMeta, &obj.Spec.Template.Spec, false
	case *batchv1.Job:
		return &obj.Spec.Template.ObjectMeta, &obj.Spec.Template.Spec, true
	case *batchv1.CronJob:
		t := &obj.Spec.JobTemplate.Spec.Template
		return &t.ObjectMeta, &t.Spec, true
	}
	return nil, nil, false
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

func (k *kube) checkObjects() {
	p := k.p
	before := len(p.list)
	for _, o := range k.objects {
		if meta, spec, isJob := podOf(o); spec != nil {
			k.checkPod(o, meta, spec, isJob)
		}
		switch obj := o.obj.(type) {
		case *batchv1.CronJob:
			if obj.Spec.ConcurrencyPolicy != batchv1.ForbidConcurrent {
				p.addf("%s: concurrencyPolicy %q: want Forbid (a sync must not overlap another)", o, obj.Spec.ConcurrencyPolicy)
			}
		case *corev1.Secret:
			// The kit's Secret is an example: placeholders only, and never applied by -k.
			for key, v := range obj.StringData {
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
	if len(p.list) == before {
		fmt.Fprintln(out, "ok: restricted Pod Security Standard (k8s.io/pod-security-admission), Secret placeholders, hrsync's containers")
	}
}

// checkPod holds a pod template to the restricted Pod Security Standard, with the admission
// controller's own checks, and checks each hrsync container.
func (k *kube) checkPod(o object, meta *metav1.ObjectMeta, spec *corev1.PodSpec, isJob bool) {
	lv := psapi.LevelVersion{Level: psapi.LevelRestricted, Version: psapi.LatestVersion()}
	for _, r := range k.psa.EvaluatePod(lv, meta, spec) {
		if !r.Allowed {
			k.p.addf("%s: Pod Security Standard restricted: %s (%s)", o, r.ForbiddenReason, r.ForbiddenDetail)
		}
	}
	// hrsync never talks to the API server: no token in its pods.
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		k.p.addf("%s: automountServiceAccountToken: false (hrsync never talks to the API server)", o)
	}
	for _, c := range allContainers(spec) {
		if c.Image == "hrsync" {
			k.checkHrsync(o, spec, c, isJob)
		}
	}
}

// checkRef checks that a ConfigMap or Secret an hrsync container reads is in the kit with that
// key, and returns its value.
func (k *kube) ref(where, kind, name, key string) string {
	o, ok := k.find(kind, name)
	if !ok {
		k.p.addf("%s: refers to %s %q, which is not in the kit", where, kind, name)
		return ""
	}
	v, ok := k.data(o)[key]
	if !ok && key != "" {
		k.p.addf("%s: refers to key %q of %s %q, which has no such key", where, key, kind, name)
	}
	return v
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

// checkHrsync checks an hrsync container: args only (the image's ENTRYPOINT is hrsync), probes
// on hrsync's health endpoints and declared ports, time to stop, and its command line with its
// environment (the Secret's placeholders), the files of its mounted ConfigMaps and its ports,
// through the invocation checks.
func (k *kube) checkHrsync(o object, spec *corev1.PodSpec, c *corev1.Container, isJob bool) {
	where := fmt.Sprintf("%s container %s", o, c.Name)
	main := slices.ContainsFunc(spec.Containers, func(m corev1.Container) bool { return m.Name == c.Name })
	if len(c.Command) > 0 {
		k.p.addf("%s: command overrides the image's ENTRYPOINT (hrsync); give args only", where)
	}
	ports := map[string]int32{}
	for _, port := range c.Ports {
		ports[port.Name] = port.ContainerPort
	}
	for _, pr := range []struct {
		what  string
		probe *corev1.Probe
	}{{"liveness", c.LivenessProbe}, {"readiness", c.ReadinessProbe}, {"startup", c.StartupProbe}} {
		if pr.probe == nil {
			continue
		}
		g := pr.probe.HTTPGet
		if g == nil {
			k.p.addf("%s: %s probe: hrsync has HTTP health endpoints; use httpGet", where, pr.what)
			continue
		}
		if g.Path != "/healthz" && g.Path != "/readyz" {
			k.p.addf("%s: %s probe path %q: hrsync answers /healthz and /readyz", where, pr.what, g.Path)
		}
		if !portResolves(g.Port, ports) {
			k.p.addf("%s: %s probe port %s is not a port of the container", where, pr.what, g.Port.String())
		}
	}
	if !isJob && main && c.ReadinessProbe == nil {
		k.p.addf("%s: no readiness probe (hrsync answers /readyz)", where)
	}
	// The worker needs time to stop: a sync rolls back, then the servers drain.
	if main && slices.Contains(c.Args, "run") {
		need := int64((stopTimeout + shutdownTimeout) / time.Second)
		if g := spec.TerminationGracePeriodSeconds; g == nil || *g < need {
			k.p.addf("%s: terminationGracePeriodSeconds must be at least %d (hrsync run stops in up to %s + %s)", where, need, stopTimeout, shutdownTimeout)
		}
	}

	inv := invocation{Where: where, Args: c.Args, Env: map[string]string{}, Files: map[string]string{}, Ports: map[string]int{}}
	for _, e := range c.Env {
		v := e.Value
		if vf := e.ValueFrom; vf != nil {
			switch {
			case vf.SecretKeyRef != nil:
				v = k.ref(where, "Secret", vf.SecretKeyRef.Name, vf.SecretKeyRef.Key)
			case vf.ConfigMapKeyRef != nil:
				v = k.ref(where, "ConfigMap", vf.ConfigMapKeyRef.Name, vf.ConfigMapKeyRef.Key)
			}
		}
		inv.Env[e.Name] = v
	}
	for _, ef := range c.EnvFrom {
		kind, name := "ConfigMap", ""
		if ef.SecretRef != nil {
			kind, name = "Secret", ef.SecretRef.Name
		} else if ef.ConfigMapRef != nil {
			name = ef.ConfigMapRef.Name
		}
		k.ref(where, kind, name, "")
		if ref, ok := k.find(kind, name); ok {
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
			k.ref(where, "ConfigMap", v.ConfigMap.Name, "")
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
	checkInvocation(inv, k.defaults, k.bin, k.p)
}

func portResolves(port intstr.IntOrString, names map[string]int32) bool {
	if port.Type == intstr.String {
		_, ok := names[port.StrVal]
		return ok
	}
	for _, n := range names {
		if n == port.IntVal {
			return true
		}
	}
	return false
}
