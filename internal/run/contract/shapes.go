package contract

// The shapes below are the closed candidate contracts of the delivery-run design (README, Delivery runs). Every key is required
// unless its json tag says omitempty; the `limit` tag is a string's cap in bytes (default
// [DefaultStringBytes]); `enum` lists the accepted values. Every list holds at most
// [MaxItems] items.

// Research is the Research stage's contract: what the pack establishes, what is still
// unknown, what required evidence is missing, and what to ask a person.
type Research struct {
	Stage                       string                `json:"stage" enum:"research"`
	EstablishedEvidence         []Evidence            `json:"establishedEvidence" jsonschema:"facts the pack establishes"`
	RemainingUnknowns           []Unknown             `json:"remainingUnknowns" jsonschema:"ask each required one in clarificationQuestions"`
	RequiredEvidenceUnavailable []UnavailableEvidence `json:"requiredEvidenceUnavailable" jsonschema:"needed evidence no pack reference provides"`
	ClarificationQuestions      []Question            `json:"clarificationQuestions"`
}

// Evidence is one established fact with its provenance.
type Evidence struct {
	ID         string   `json:"id" limit:"128"`
	Statement  string   `json:"statement" limit:"4096"`
	References []string `json:"references" limit:"256" jsonschema:"at least one"`
}

// Unknown is one open question of fact.
type Unknown struct {
	ID          string `json:"id" limit:"128"`
	Description string `json:"description" limit:"4096"`
	// Required unknowns must be resolved by clarification before the run goes on.
	Required   bool     `json:"required" jsonschema:"the work cannot go on without an answer"`
	References []string `json:"references,omitempty" limit:"256"`
}

// UnavailableEvidence is evidence the work needs that the pack does not hold.
type UnavailableEvidence struct {
	ID          string `json:"id" limit:"128"`
	Description string `json:"description" limit:"4096"`
}

// Question is one clarification question for a person.
type Question struct {
	ID         string   `json:"id" limit:"128"`
	Question   string   `json:"question" limit:"4096"`
	UnknownIDs []string `json:"unknownIds" limit:"128" jsonschema:"remainingUnknowns ids it resolves (at least one)"`
}

// Specification is the Specification stage's contract.
type Specification struct {
	Title           string    `json:"title" limit:"512"`
	Sections        []Section `json:"sections" jsonschema:"at least one"`
	InputReferences []string  `json:"inputReferences" limit:"256" jsonschema:"at least one"`
}

// Section is one section of a specification.
type Section struct {
	ID    string `json:"id" limit:"128"`
	Title string `json:"title" limit:"512"`
	Body  string `json:"body" limit:"16384" jsonschema:"markdown"`
	Items []Item `json:"items" jsonschema:"requirements, acceptance criteria, constraints; tickets cite their ids"`
}

// Item kinds.
const (
	ItemRequirement = "requirement"
	ItemAcceptance  = "acceptance"
	ItemConstraint  = "constraint"
)

// Item is one addressable statement of a specification.
type Item struct {
	ID        string `json:"id" limit:"128"`
	Kind      string `json:"kind" enum:"requirement,acceptance,constraint"`
	Statement string `json:"statement" limit:"4096"`
}

// TicketPlan is the Ticket Planning stage's contract.
type TicketPlan struct {
	Tickets []Ticket `json:"tickets" jsonschema:"at least one; dependencies form no cycle"`
}

// Ticket is one unit of work for a writer.
type Ticket struct {
	ID          string   `json:"id" limit:"128"`
	Title       string   `json:"title" limit:"512"`
	SpecItemIDs []string `json:"specItemIds" limit:"128" jsonschema:"approved specification item ids it implements (at least one)"`
	DependsOn   []string `json:"dependsOn" limit:"128" jsonschema:"ids of tickets accepted before it"`
}

// ItemIDs returns the ids of every item of s, in order: what Ticket Planning binds
// specItemIds to.
func (s *Specification) ItemIDs() []string {
	var ids []string
	for _, sec := range s.Sections {
		for _, it := range sec.Items {
			ids = append(ids, it.ID)
		}
	}
	return ids
}
