package install

import (
	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// ConfinementPolicy confines each operator's own identity (its
// ServiceAccount, system:serviceaccount:<namespace>:<id>-operator) to its
// share: it may create, change and delete the resources operators write
// (Integrations, Pipes, kits, builds, Deployments, ConfigMaps, Services)
// only in the namespaces it serves, and only when the object is, or
// stays, labelled with its own id. RBAC cannot say that: it grants a verb
// on every object of a kind in a namespace.
//
// The writes of the protocol that touch another operator's object stay
// allowed, each for the one case that needs it:
//   - the release (docs/architecture.md, Handover): the previous owner records it in the
//     status of an integration that status still says is its own, and
//     hands the label over to the id the annotation names;
//   - adoption: a resource that names no operator is stamped with the
//     adopter's id, and a label catches up with an assignment to it;
//   - takeover of a child: after a move, the new owner relabels a child
//     that a Caravan resource controls, keeping its owner references:
//     the previous owner's Deployment, ConfigMaps and Services, and the
//     Integration of a moved Pipe. (It deletes only what is labelled
//     with its own id, so it takes a child over before deleting it.)
//   - the default operator's orphan mark: a status change of another
//     operator's resource that keeps its phase and its owner.
//
// One binding covers every operator: its parameters are all the
// IntegrationOperators, and a match condition keeps only the one whose
// identity made the request, so the other operators' cost one string
// comparison each and users' requests cost nothing more.
const ConfinementPolicy = "caravan-operator-confinement"

// confinedResources are what the policy judges, by API group.
var confinedResources = map[string][]string{
	camelv1.GroupVersion.Group: {"integrations", "integrations/status", "pipes", "pipes/status",
		"kameletbindings", "kameletbindings/status", "integrationkits", "integrationkits/status", "builds", "builds/status"},
	"apps":                  {"deployments"},
	"policy":                {"poddisruptionbudgets"},
	"networking.k8s.io":     {"ingresses"},
	"monitoring.coreos.com": {"podmonitors"},
	"":                      {"configmaps", "services"},
}

const (
	// homeNamespace is where the parameter's operator runs: where it was
	// installed, or where it registered.
	homeNamespace = `has(params.metadata.annotations) && '` + InstalledNamespaceAnnotation + `' in params.metadata.annotations` +
		` ? params.metadata.annotations['` + InstalledNamespaceAnnotation + `']` +
		` : (has(params.status) && has(params.status.namespace) ? params.status.namespace : '')`
	// isOperatorIdentity: the request comes from the ServiceAccount of
	// the parameter's operator. (Match conditions cannot use variables.)
	isOperatorIdentity = `request.userInfo.username == 'system:serviceaccount:' + (` + homeNamespace + `) + ':' + params.metadata.name + '-operator'`

	newID       = `object != null && has(object.metadata.labels) && 'camel.apache.org/operator.id' in object.metadata.labels ? object.metadata.labels['camel.apache.org/operator.id'] : ''`
	oldID       = `oldObject != null && has(oldObject.metadata.labels) && 'camel.apache.org/operator.id' in oldObject.metadata.labels ? oldObject.metadata.labels['camel.apache.org/operator.id'] : ''`
	newAssigned = `object != null && has(object.metadata.annotations) && 'camel.apache.org/operator.id' in object.metadata.annotations ? object.metadata.annotations['camel.apache.org/operator.id'] : ''`
	oldAssigned = `oldObject != null && has(oldObject.metadata.annotations) && 'camel.apache.org/operator.id' in oldObject.metadata.annotations ? oldObject.metadata.annotations['camel.apache.org/operator.id'] : ''`
	newOwner    = `object != null && has(object.status) && has(object.status.ownership) && has(object.status.ownership.owner) ? object.status.ownership.owner : ''`
	oldOwner    = `oldObject != null && has(oldObject.status) && has(oldObject.status.ownership) && has(oldObject.status.ownership.owner) ? oldObject.status.ownership.owner : ''`
	newPhase    = `object != null && has(object.status) && has(object.status.phase) ? object.status.phase : ''`
	oldPhase    = `oldObject != null && has(oldObject.status) && has(oldObject.status.phase) ? oldObject.status.phase : ''`
	// controlled: the object as it was is controlled by a Caravan resource.
	controlled = `oldObject != null && has(oldObject.metadata.ownerReferences) && oldObject.metadata.ownerReferences.exists(r,` +
		` has(r.controller) && r.controller && r.apiVersion.startsWith('camel.apache.org/'))`
	refsKept = `object != null && has(object.metadata.ownerReferences) && variables.controlled` +
		` && object.metadata.ownerReferences == oldObject.metadata.ownerReferences`
	serves = `request.namespace == variables.home || !has(params.spec) || !has(params.spec.watchNamespaces)` +
		` || size(params.spec.watchNamespaces) == 0 || request.namespace in params.spec.watchNamespaces`

	mayCreate = `request.operation != 'CREATE' || variables.newID == variables.id`
	mayUpdate = `request.operation != 'UPDATE'` +
		// Its own, and it stays so, or its label follows the assignment.
		` || (variables.oldID == variables.id && (variables.newID == variables.id` +
		` || (variables.newID == variables.newAssigned && variables.newAssigned == variables.oldAssigned)))` +
		// The label catches up with an assignment to it.
		` || (variables.oldAssigned == variables.id && variables.newAssigned == variables.id && variables.newID == variables.id)` +
		// Adoption of a resource that names no operator.
		` || (request.resource.group == 'camel.apache.org' && variables.oldID == '' && variables.oldAssigned == ''` +
		` && variables.newID == variables.id)` +
		// Takeover of a child after a move.
		` || (variables.oldID != '' && variables.newID == variables.id && variables.refsKept)` +
		// The release, recorded by the owner its status still names.
		` || (request.subResource == 'status' && variables.oldOwner == variables.id && variables.newOwner == variables.id)` +
		// The default operator's orphan mark.
		` || (request.subResource == 'status' && has(params.spec) && has(params.spec.default) && params.spec.default` +
		` && variables.oldOwner == variables.newOwner && variables.oldPhase == variables.newPhase)`
	mayDelete = `request.operation != 'DELETE' || variables.oldID == variables.id`

	servesMessage = `'the identity of operator ' + variables.id + ' may write ' + request.resource.resource +
		' only in the namespaces it serves, and ' + request.namespace + ' is not one of them'`
	createMessage = `'the identity of operator ' + variables.id + ' may create ' + request.kind.kind +
		' only labelled camel.apache.org/operator.id=' + variables.id + ', and ' + request.name + ' is ' +
		(variables.newID == '' ? 'not labelled' : 'labelled ' + variables.newID)`
	updateMessage = `'the identity of operator ' + variables.id + ' may change ' + request.kind.kind + ' ' + request.name +
		' only while it is labelled camel.apache.org/operator.id=' + variables.id + ', and it is ' +
		(variables.oldID == '' ? 'not labelled' : 'labelled ' + variables.oldID) +
		(variables.newID != variables.oldID ? ' (the change labels it ' + (variables.newID == '' ? 'with none' : variables.newID) + ')' : '')`
	deleteMessage = `'the identity of operator ' + variables.id + ' may delete ' + request.kind.kind + ' ' + request.name +
		' only while it is labelled camel.apache.org/operator.id=' + variables.id + ', and it is ' +
		(variables.oldID == '' ? 'not labelled' : 'labelled ' + variables.oldID)`
)

func confinementRules() *admissionv1.MatchResources {
	m := &admissionv1.MatchResources{}
	for _, group := range []string{camelv1.GroupVersion.Group, "apps", "policy", "networking.k8s.io", "monitoring.coreos.com", ""} {
		m.ResourceRules = append(m.ResourceRules, admissionv1.NamedRuleWithOperations{
			RuleWithOperations: admissionv1.RuleWithOperations{
				Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update, admissionv1.Delete},
				Rule: admissionv1.Rule{APIGroups: []string{group}, APIVersions: []string{"*"},
					Resources: append([]string(nil), confinedResources[group]...)},
			},
		})
	}
	return m
}

func confinementPolicy() client.Object {
	forbidden := ptr.To(metav1.StatusReasonForbidden)
	v := func(name, expr string) admissionv1.Variable {
		return admissionv1.Variable{Name: name, Expression: expr}
	}
	return &admissionv1.ValidatingAdmissionPolicy{
		TypeMeta:   typeMeta("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"),
		ObjectMeta: metav1.ObjectMeta{Name: ConfinementPolicy},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionv1.Fail), ParamKind: operatorParam(),
			MatchConstraints: confinementRules(),
			MatchConditions: []admissionv1.MatchCondition{
				{Name: "a-service-account", Expression: `request.userInfo.username.startsWith('system:serviceaccount:')`},
				// A dry run changes nothing; the operator's probe of the
				// label policy is one (a create that the label policy
				// should have labelled).
				{Name: "not-a-dry-run", Expression: `!(has(request.dryRun) && request.dryRun)`},
				{Name: "this-operators-identity", Expression: isOperatorIdentity},
			},
			Variables: []admissionv1.Variable{
				v("id", "params.metadata.name"), v("home", homeNamespace),
				v("newID", newID), v("oldID", oldID), v("newAssigned", newAssigned), v("oldAssigned", oldAssigned),
				v("newOwner", newOwner), v("oldOwner", oldOwner), v("newPhase", newPhase), v("oldPhase", oldPhase),
				v("controlled", controlled), v("refsKept", refsKept),
			},
			Validations: []admissionv1.Validation{
				{Expression: serves, MessageExpression: servesMessage, Reason: forbidden},
				{Expression: mayCreate, MessageExpression: createMessage, Reason: forbidden},
				{Expression: mayUpdate, MessageExpression: updateMessage, Reason: forbidden},
				{Expression: mayDelete, MessageExpression: deleteMessage, Reason: forbidden},
			},
		},
	}
}

// confinementBinding applies ConfinementPolicy once, with every
// IntegrationOperator as a parameter.
func confinementBinding() client.Object {
	return &admissionv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   typeMeta("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding"),
		ObjectMeta: metav1.ObjectMeta{Name: ConfinementPolicy},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName: ConfinementPolicy,
			ParamRef: &admissionv1.ParamRef{Selector: &metav1.LabelSelector{},
				ParameterNotFoundAction: ptr.To(admissionv1.AllowAction)},
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
		},
	}
}
