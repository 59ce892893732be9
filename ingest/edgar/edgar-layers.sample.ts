/**
 * Sample EDGAR layer files in the real formats, for every company of the
 * sample universe (deterministic in seed and CIK):
 *
 *   sec/companyfacts/CIK##########.json                         XBRL companyfacts (dei + us-gaap; ifrs-full for
 *                                                               Cayman filers; Alphabet-style multi-class without dei shares)
 *   sec/filings/{cik}/{acc-no-dashes}/{primaryDocument}         latest 10-K (Items 1, 1A, 7 with employees, products,
 *                                                               partnerships, executive officers, signal wording) and
 *                                                               recent 8-Ks (2.02, 5.02, 2.01 …) as HTML
 *   sec/filings/{cik}/{acc-no-dashes}/{accession}.txt           a complete submission with the SGML header for some 2.02s
 *   sec/ownership/{cik}/{acc-no-dashes}/form4.xml               Forms 3/4 of officers and directors; directors come from a
 *                                                               shared pool, so many sit on several boards
 *   sec/index/daily/{master,form}.{YYYYMMDD}.idx                daily index files of the last business days
 */
import { addDays, Rng, SAMPLE_TODAY, type SampleFile } from '../sample/sample-kit.ts';
import type { SampleCompany } from '../sample/universe.ts';
import { padCik } from './cik.ts';

/** One filing of the sample's submissions JSON (`filings.recent` columns, one row). */
export interface SampleFiling {
  accessionNumber: string;
  filingDate: string;
  reportDate: string;
  acceptanceDateTime: string;
  form: string;
  items: string;
  primaryDocument: string;
  primaryDocDescription: string;
  size: number;
}

const FIRST = [
  'James',
  'Mary',
  'Robert',
  'Patricia',
  'John',
  'Jennifer',
  'Michael',
  'Linda',
  'David',
  'Elizabeth',
  'William',
  'Susan',
  'Richard',
  'Jessica',
  'Joseph',
  'Sarah',
  'Thomas',
  'Karen',
  'Carlos',
  'Priya',
  'Wei',
  'Aisha',
  'Kenji',
  'Olga',
  'Rafael',
  'Nadia',
  'Samuel',
  'Grace',
  'Daniel',
  'Laura',
];
const LAST = [
  'Smith',
  'Johnson',
  'Williams',
  'Brown',
  'Jones',
  'Garcia',
  'Miller',
  'Davis',
  'Rodriguez',
  'Martinez',
  'Chen',
  'Patel',
  'Kim',
  'Nguyen',
  'Okafor',
  'Schmidt',
  'Rossi',
  'Tanaka',
  'Kowalski',
  'Haddad',
  'Larsen',
  'Moreau',
  'Silva',
  'Cohen',
  'Murphy',
  'Walsh',
  'Fischer',
  'Novak',
  'Reyes',
  'Singh',
];
const MIDDLE = ['A.', 'B.', 'C.', 'D.', 'E.', 'J.', 'K.', 'L.', 'M.', 'R.', 'S.', 'T.'];
const PARTNERS = [
  'Microsoft Corporation',
  'Amazon Web Services',
  'Siemens AG',
  'Accenture plc',
  'Deloitte LLP',
  'Samsung Electronics',
  'Taiwan Semiconductor Manufacturing Company',
  'Oracle Corporation',
  'Salesforce, Inc.',
  'IBM',
  'Cisco Systems',
  'Bosch',
  'Pfizer Inc.',
  'Walmart Inc.',
];
const PRODUCTS: Record<string, string[]> = {
  hardware: ['Personal Computers', 'Servers', 'Storage Systems', 'Wearables', 'Accessories'],
  semis: ['Data Center Processors', 'Networking Chips', 'Graphics Processors', 'Automotive SoCs'],
  software: ['Cloud Platform', 'Productivity Suite', 'Security Software', 'Developer Tools'],
  ai: ['AI Platform', 'Inference Services', 'Model Training Systems', 'Analytics Cloud'],
  pharma: ['Oncology Portfolio', 'Vaccines', 'Immunology Therapies'],
  bank: ['Consumer Banking', 'Commercial Lending', 'Wealth Management'],
  retail: ['Stores', 'E-commerce', 'Private Label Brands'],
  utility: ['Electric Distribution', 'Renewable Generation', 'Transmission'],
  energy: ['Upstream Production', 'Midstream Pipelines', 'Refining'],
  auto: ['Passenger Vehicles', 'Commercial Trucks', 'Charging Services'],
  freight: ['Truckload Services', 'Intermodal', 'Logistics Brokerage'],
  spac: ['Business Combination'],
};

export interface SamplePerson {
  name: string;
  /** EDGAR writes reporting owners LAST FIRST MIDDLE. */
  edgar_name: string;
  cik: number;
}

function makePerson(rng: Rng, cik: number): SamplePerson {
  const first = rng.pick(FIRST);
  const last = rng.pick(LAST);
  const mid = rng.pick(MIDDLE);
  return { name: `${first} ${mid} ${last}`, edgar_name: `${last} ${first} ${mid.replace('.', '')}`, cik };
}

/** A pool of directors shared across companies (board interlocks), deterministic in seed. */
export function directorPool(count: number, seed: number): SamplePerson[] {
  const rng = new Rng(seed).fork('directors');
  return Array.from({ length: count }, (_, i) => makePerson(rng, 1_900_000 + i));
}

export interface CompanyPeople {
  ceo: SamplePerson;
  cfo: SamplePerson;
  gc: SamplePerson;
  directors: SamplePerson[];
}

/** The officers (own) and directors (from the shared pool) of a company. */
export function companyPeople(c: SampleCompany, seed: number, pool: SamplePerson[]): CompanyPeople {
  const rng = new Rng(seed).fork(`people:${c.cik}`);
  const base = 1_700_000 + ((c.cik * 7) % 190_000) * 3;
  const directors = [rng.pick(pool), rng.pick(pool)];
  if (directors[1] === directors[0]) directors.pop();
  return { ceo: makePerson(rng, base), cfo: makePerson(rng, base + 1), gc: makePerson(rng, base + 2), directors };
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const money = (n: number) => `$${(n / 1e6).toLocaleString('en-US', { maximumFractionDigits: 1 })} million`;

function htmlDoc(title: string, body: string[]): string {
  return `<html><head><title>${esc(title)}</title></head><body>\n${body.join('\n')}\n</body></html>\n`;
}
const p = (s: string) => `<p>${esc(s)}</p>`;
const h = (s: string) => `<p><b>${esc(s)}</b></p>`;

/** The 10-K primary document (inline-XBRL cover reduced to dei:DocumentType and the CIK). */
export function tenKHtml(c: SampleCompany, f: SampleFiling, people: CompanyPeople, seed: number): string {
  const rng = new Rng(seed).fork(`10k:${c.cik}:${f.accessionNumber}`);
  const products = PRODUCTS[c.theme] ?? PRODUCTS.software;
  const partner = rng.pick(PARTNERS);
  const capex = Math.round(c.employees * rng.int(5_000, 40_000));
  const body: string[] = [
    `<div style="display:none"><ix:header><ix:hidden><ix:nonNumeric name="dei:DocumentType" contextRef="c-1">10-K</ix:nonNumeric><ix:nonNumeric name="dei:EntityCentralIndexKey" contextRef="c-1">${padCik(c.cik)}</ix:nonNumeric></ix:hidden></ix:header></div>`,
    h('UNITED STATES SECURITIES AND EXCHANGE COMMISSION'),
    h('FORM 10-K'),
    p(`ANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934 for the fiscal year ended ${f.reportDate}`),
    h(c.name.toUpperCase()),
    '<table><tr><td>Item 1.</td><td>Business</td><td>1</td></tr><tr><td>Item 1A.</td><td>Risk Factors</td><td>5</td></tr><tr><td>Item 7.</td><td>Management’s Discussion and Analysis of Financial Condition and Results of Operations</td><td>20</td></tr></table>',
    h('Item 1. Business'),
    p(`${c.name} designs, manufactures and sells products and services to customers worldwide from its headquarters in ${c.city}.`),
    h('Products'),
    ...products.map(
      (x) => `${h(x)}${p(`${x} is one of the Company’s principal product lines and is sold through direct and indirect channels.`)}`,
    ),
    h('Competition'),
    p('The markets for the Company’s products are highly competitive.'),
    p(
      `In ${f.reportDate.slice(0, 4)} the Company entered into a strategic alliance with ${partner} to expand distribution of its offerings.`,
    ),
    h('Human Capital'),
    p(`As of ${f.reportDate}, the Company had approximately ${c.employees.toLocaleString('en-US')} full-time employees.`),
    h('Information About Our Executive Officers'),
    '<table><tr><td>Name</td><td>Age</td><td>Position</td></tr>' +
      [
        [people.ceo, 'President and Chief Executive Officer'],
        [people.cfo, 'Executive Vice President and Chief Financial Officer'],
        [people.gc, 'Senior Vice President, General Counsel and Secretary'],
      ]
        .map(([x, t], i) => `<tr><td>${esc((x as SamplePerson).name)}</td><td>${48 + ((c.cik + i * 7) % 20)}</td><td>${t}</td></tr>`)
        .join('') +
      '</table>',
    h('Item 1A. Risk Factors'),
    p(
      'The Company’s business, results of operations and financial condition could be adversely affected by changes in global economic conditions.',
    ),
  ];
  const ai = ['ai', 'software', 'semis'].includes(c.theme) ? rng.bool(0.8) : rng.bool(0.2);
  if (ai)
    body.push(
      p(
        `We use artificial intelligence and machine learning in our ${products[0].toLowerCase()} and we continue to invest in generative AI capabilities.`,
      ),
    );
  else
    body.push(p('New laws and regulations governing artificial intelligence may increase compliance costs for companies in our industry.'));
  if (rng.bool(0.6))
    body.push(
      p(
        `We are subject to legal proceedings and claims, including ${rng.bool(0.5) ? 'a putative class action' : 'patent infringement lawsuits'} filed against us, the outcome of which is inherently uncertain.`,
      ),
    );
  else body.push(p('We are not currently a party to any material pending legal proceedings.'));
  body.push(h('Item 1B. Unresolved Staff Comments'), p('None.'));
  body.push(h('Item 7. Management’s Discussion and Analysis of Financial Condition and Results of Operations'));
  body.push(p(`Net sales and operating results for fiscal ${f.reportDate.slice(0, 4)} are discussed below.`));
  if (['utility', 'energy', 'semis', 'auto', 'ai'].includes(c.theme) ? rng.bool(0.7) : rng.bool(0.25)) {
    body.push(
      p(
        `We expect to increase capital expenditures to approximately ${money(capex)} in the next fiscal year to expand manufacturing capacity.`,
      ),
    );
  } else {
    body.push(p(`Capital expenditures decreased to ${money(capex / 3)} as the Company completed its prior investment program.`));
  }
  if (rng.bool(0.15))
    body.push(
      p(
        `During the year the Company initiated a restructuring plan, including a workforce reduction of approximately ${rng.int(3, 15)}% of employees, and recorded restructuring charges of ${money(capex / 10)}.`,
      ),
    );
  body.push(
    h('Item 7A. Quantitative and Qualitative Disclosures About Market Risk'),
    p('The Company is exposed to interest rate and foreign currency risk.'),
  );
  body.push(h('Item 8. Financial Statements and Supplementary Data'), p('The financial statements are included herein.'));
  return htmlDoc(`${c.ticker} 10-K`, body);
}

const ITEM_TEXT: Record<string, (c: SampleCompany, f: SampleFiling, people: CompanyPeople, rng: Rng) => string> = {
  '2.02': (c, f) =>
    `On ${f.filingDate}, ${c.name} issued a press release announcing its financial results for the quarter ended ${f.reportDate}. A copy of the press release is furnished as Exhibit 99.1.`,
  '5.02': (c, _f, people, rng) =>
    rng.bool(0.5)
      ? `${people.cfo.name} informed the Board of Directors of ${c.name} of the decision to retire as Chief Financial Officer. The Board appointed a successor effective immediately.`
      : `The Board of Directors of ${c.name} elected ${people.directors[0]?.name ?? people.ceo.name} as a director of the Company, effective immediately.`,
  '2.01': (c) => `${c.name} completed the acquisition of all outstanding shares of a privately held company for cash consideration.`,
  '2.05': (c) => `${c.name} committed to a restructuring plan to reduce operating costs, including a reduction in force.`,
  '7.01': (c) => `${c.name} announced the launch of a new product line. The press release is furnished as Exhibit 99.1.`,
  '8.01': (c) => `${c.name} announced that its Board of Directors declared a quarterly cash dividend.`,
  '3.01': (c) => `${c.name} received notice from its exchange that it no longer satisfies a continued listing rule.`,
  '5.01': (c) => `Upon completion of the merger, a change in control of ${c.name} occurred.`,
  '9.01': () => '(d) Exhibits. 99.1 Press release.',
};

export function eightKHtml(c: SampleCompany, f: SampleFiling, people: CompanyPeople, seed: number): string {
  const rng = new Rng(seed).fork(`8k:${f.accessionNumber}`);
  const items = f.items.split(',').filter(Boolean);
  const body = [
    h('UNITED STATES SECURITIES AND EXCHANGE COMMISSION'),
    h('FORM 8-K'),
    h('CURRENT REPORT'),
    p(
      `Date of Report (Date of earliest event reported): ${new Date(`${f.reportDate}T00:00:00Z`).toLocaleDateString('en-US', { month: 'long', day: 'numeric', year: 'numeric', timeZone: 'UTC' })}`,
    ),
    h(c.name.toUpperCase()),
  ];
  for (const it of items) {
    const title =
      {
        '2.02': 'Results of Operations and Financial Condition',
        '5.02': 'Departure of Directors or Certain Officers; Election of Directors',
        '2.01': 'Completion of Acquisition or Disposition of Assets',
        '2.05': 'Costs Associated with Exit or Disposal Activities',
        '7.01': 'Regulation FD Disclosure',
        '8.01': 'Other Events',
        '9.01': 'Financial Statements and Exhibits',
        '3.01': 'Notice of Delisting',
        '5.01': 'Changes in Control of Registrant',
      }[it] ?? 'Other';
    body.push(h(`Item ${it}. ${title}`), p((ITEM_TEXT[it] ?? ITEM_TEXT['8.01'])(c, f, people, rng)));
  }
  body.push(h('SIGNATURES'));
  return htmlDoc(`${c.ticker} 8-K`, body);
}

/** A complete submission (`{accession}.txt`) with the SGML header; ACCEPTANCE-DATETIME is Eastern wall-clock. */
export function completeSubmission(c: SampleCompany, f: SampleFiling, html: string): string {
  const accept = f.acceptanceDateTime.slice(0, 19).replace(/[-:T]/g, '');
  const ymd = f.filingDate.replace(/-/g, '');
  return [
    `<SEC-DOCUMENT>${f.accessionNumber}.txt : ${ymd}`,
    `<SEC-HEADER>${f.accessionNumber}.hdr.sgml : ${ymd}`,
    `<ACCEPTANCE-DATETIME>${accept}`,
    `ACCESSION NUMBER:\t\t${f.accessionNumber}`,
    `CONFORMED SUBMISSION TYPE:\t${f.form}`,
    'PUBLIC DOCUMENT COUNT:\t\t2',
    `CONFORMED PERIOD OF REPORT:\t${f.reportDate.replace(/-/g, '')}`,
    ...f.items
      .split(',')
      .filter((i) => i === '2.02')
      .map(() => 'ITEM INFORMATION:\t\tResults of Operations and Financial Condition'),
    `FILED AS OF DATE:\t\t${ymd}`,
    '',
    'FILER:',
    '',
    '\tCOMPANY DATA:\t',
    `\t\tCOMPANY CONFORMED NAME:\t\t\t${c.name.toUpperCase()}`,
    `\t\tCENTRAL INDEX KEY:\t\t\t${padCik(c.cik)}`,
    `\t\tSTANDARD INDUSTRIAL CLASSIFICATION:\t${c.sic_description.toUpperCase()} [${c.sic}]`,
    '</SEC-HEADER>',
    '<DOCUMENT>',
    `<TYPE>${f.form}`,
    '<SEQUENCE>1',
    `<FILENAME>${f.primaryDocument}`,
    `<DESCRIPTION>${f.form}`,
    '<TEXT>',
    html,
    '</TEXT>',
    '</DOCUMENT>',
    '</SEC-DOCUMENT>',
    '',
  ].join('\n');
}

export function ownershipXml(
  c: SampleCompany,
  person: SamplePerson,
  rel: { director: boolean; officerTitle: string | null },
  form: '3' | '4',
  period: string,
  seed: number,
): string {
  const rng = new Rng(seed).fork(`own:${c.cik}:${person.cik}`);
  const tx =
    form === '4'
      ? `    <nonDerivativeTable>
        <nonDerivativeTransaction>
            <securityTitle><value>Common Stock</value></securityTitle>
            <transactionDate><value>${period}</value></transactionDate>
            <transactionCoding><transactionFormType>4</transactionFormType><transactionCode>${rng.pick(['S', 'M', 'A'])}</transactionCode><equitySwapInvolved>0</equitySwapInvolved></transactionCoding>
            <transactionAmounts><transactionShares><value>${rng.int(100, 50_000)}</value></transactionShares><transactionPricePerShare><value>${rng.int(5, 500)}.${rng.int(10, 99)}</value></transactionPricePerShare><transactionAcquiredDisposedCode><value>${rng.pick(['A', 'D'])}</value></transactionAcquiredDisposedCode></transactionAmounts>
            <postTransactionAmounts><sharesOwnedFollowingTransaction><value>${rng.int(1_000, 900_000)}</value></sharesOwnedFollowingTransaction></postTransactionAmounts>
            <ownershipNature><directOrIndirectOwnership><value>D</value></directOrIndirectOwnership></ownershipNature>
        </nonDerivativeTransaction>
    </nonDerivativeTable>\n`
      : `    <noSecuritiesOwned>1</noSecuritiesOwned>\n`;
  return `<?xml version="1.0"?>
<ownershipDocument>

    <schemaVersion>X0508</schemaVersion>

    <documentType>${form}</documentType>

    <periodOfReport>${period}</periodOfReport>

    <issuer>
        <issuerCik>${padCik(c.cik)}</issuerCik>
        <issuerName>${esc(c.name)}</issuerName>
        <issuerTradingSymbol>${c.ticker}</issuerTradingSymbol>
    </issuer>

    <reportingOwner>
        <reportingOwnerId>
            <rptOwnerCik>${padCik(person.cik)}</rptOwnerCik>
            <rptOwnerName>${esc(person.edgar_name)}</rptOwnerName>
        </reportingOwnerId>
        <reportingOwnerAddress>
            <rptOwnerStreet1>${100 + (c.cik % 900)} MAIN STREET</rptOwnerStreet1>
            <rptOwnerCity>${c.city}</rptOwnerCity>
            <rptOwnerState>${c.state}</rptOwnerState>
        </reportingOwnerAddress>
        <reportingOwnerRelationship>
            <isDirector>${rel.director ? 1 : 0}</isDirector>
            <isOfficer>${rel.officerTitle ? 1 : 0}</isOfficer>
            <isTenPercentOwner>0</isTenPercentOwner>
            <isOther>0</isOther>
${rel.officerTitle ? `            <officerTitle>${esc(rel.officerTitle)}</officerTitle>\n` : ''}        </reportingOwnerRelationship>
    </reportingOwner>

${tx}
    <ownerSignature>
        <signatureName>/s/ ${esc(person.name)}</signatureName>
        <signatureDate>${addDays(period, 2)}</signatureDate>
    </ownerSignature>
</ownershipDocument>
`;
}

/** companyfacts JSON with the concepts the registry reads, repeated across filings as the real API does. */
export function companyFactsJson(c: SampleCompany, filings: SampleFiling[], seed: number): string {
  const rng = new Rng(seed).fork(`facts:${c.cik}`);
  const periodic = filings
    .filter((f) => f.form === '10-K' || f.form === '10-Q')
    .slice()
    .reverse();
  const ifrs = c.state_of_incorporation === 'E9';
  const multiClass = c.extra_tickers.some((t) => !t.includes('-'));
  const annualRevenue = Math.round(c.employees * rng.int(150_000, 600_000));
  const margin = rng.int(-10, 30) / 100;
  const shares: object[] = [];
  const floatFacts: object[] = [];
  const revenue: object[] = [];
  const income: object[] = [];
  let sh = c.shares_outstanding;
  for (const f of periodic) {
    sh = Math.round(sh * (1 + rng.int(-10, 10) / 1000));
    const fy = Number(f.reportDate.slice(0, 4));
    const fp = f.form === '10-K' ? 'FY' : 'Q';
    shares.push({
      end: addDays(f.filingDate, -rng.int(5, 20)),
      val: sh,
      accn: f.accessionNumber,
      fy,
      fp,
      form: f.form,
      filed: f.filingDate,
    });
    if (f.form === '10-K') {
      const start = addDays(f.reportDate, -364);
      const rev = Math.round(annualRevenue * (0.8 + rng.next() * 0.4));
      revenue.push({
        start,
        end: f.reportDate,
        val: rev,
        accn: f.accessionNumber,
        fy,
        fp: 'FY',
        form: f.form,
        filed: f.filingDate,
        frame: `CY${fy}`,
      });
      income.push({
        start,
        end: f.reportDate,
        val: Math.round(rev * margin),
        accn: f.accessionNumber,
        fy,
        fp: 'FY',
        form: f.form,
        filed: f.filingDate,
        frame: `CY${fy}`,
      });
      floatFacts.push({
        end: addDays(f.reportDate, -182),
        val: Math.round(sh * rng.int(5, 300) * 0.9),
        accn: f.accessionNumber,
        fy,
        fp: 'FY',
        form: f.form,
        filed: f.filingDate,
      });
      if (rng.bool(0.05)) {
        // An amendment restating the same period: the parser flags it and prefers the original.
        revenue.push({
          start,
          end: f.reportDate,
          val: Math.round(rev * 1.01),
          accn: f.accessionNumber.replace(/\d{6}$/, (s) => String((Number(s) + 500) % 1e6).padStart(6, '0')),
          fy,
          fp: 'FY',
          form: '10-K/A',
          filed: addDays(f.filingDate, 40),
        });
      }
    }
  }
  const facts: Record<string, Record<string, unknown>> = { dei: {} };
  if (!multiClass)
    facts.dei.EntityCommonStockSharesOutstanding = {
      label: 'Entity Common Stock, Shares Outstanding',
      description: 'Indicate number of shares outstanding.',
      units: { shares: shares },
    };
  facts.dei.EntityPublicFloat = {
    label: 'Entity Public Float',
    description: 'Aggregate market value of voting stock held by non-affiliates.',
    units: { USD: floatFacts },
  };
  if (ifrs) {
    facts['ifrs-full'] = {
      Revenue: { label: 'Revenue', description: 'Revenue (IFRS).', units: { USD: revenue } },
      ProfitLoss: { label: 'Profit (loss)', description: 'Profit or loss (IFRS).', units: { USD: income } },
    };
  } else {
    facts['us-gaap'] = {
      RevenueFromContractWithCustomerExcludingAssessedTax: {
        label: 'Revenue from Contract with Customer, Excluding Assessed Tax',
        description: 'Revenue.',
        units: { USD: revenue },
      },
      NetIncomeLoss: { label: 'Net Income (Loss) Attributable to Parent', description: 'Net income.', units: { USD: income } },
      ...(multiClass
        ? {
            CommonStockSharesOutstanding: {
              label: 'Common Stock, Shares, Outstanding',
              description: 'Shares outstanding.',
              units: { shares: shares.map((s) => ({ ...s, end: (s as { end: string }).end })) },
            },
          }
        : {}),
    };
  }
  return JSON.stringify({ cik: c.cik, entityName: c.name, facts });
}

const pad = (s: string, n: number) => (s.length >= n ? s.slice(0, n) : s + ' '.repeat(n - s.length));

/** Daily master (pipe-delimited) and form (fixed-width) index files for the given day's filings. */
export function dailyIndexFiles(day: string, rows: Array<{ c: SampleCompany; f: SampleFiling }>): SampleFile[] {
  const ymd = day.replace(/-/g, '');
  const received = new Date(`${day}T00:00:00Z`).toLocaleDateString('en-US', {
    month: 'short',
    day: 'numeric',
    year: 'numeric',
    timeZone: 'UTC',
  });
  const file = (r: { c: SampleCompany; f: SampleFiling }) => `edgar/data/${r.c.cik}/${r.f.accessionNumber}.txt`;
  const sorted = rows.slice().sort((a, b) => a.c.cik - b.c.cik || a.f.accessionNumber.localeCompare(b.f.accessionNumber));
  const master =
    [
      'Description:           Daily Index of EDGAR Dissemination Feed',
      `Last Data Received:    ${received}`,
      'Comments:              webmaster@sec.gov',
      'Anonymous FTP:         ftp://ftp.sec.gov/edgar/',
      ' ',
      'CIK|Company Name|Form Type|Date Filed|File Name',
      '-'.repeat(80),
      ...sorted.map((r) => `${r.c.cik}|${r.c.name.toUpperCase()}|${r.f.form}|${ymd}|${file(r)}`),
    ].join('\n') + '\n';
  const byForm = rows.slice().sort((a, b) => a.f.form.localeCompare(b.f.form) || a.c.name.localeCompare(b.c.name));
  const form =
    [
      'Description:           Daily Index of EDGAR Dissemination Feed by Form Type',
      `Last Data Received:    ${received}`,
      'Comments:              webmaster@sec.gov',
      'Anonymous FTP:         ftp://ftp.sec.gov/edgar/',
      ' ',
      ' ',
      ' ',
      'Form Type   Company Name                                                  CIK         Date Filed  File Name',
      '-'.repeat(141),
      ...byForm.map((r) => `${pad(r.f.form, 12)}${pad(r.c.name, 62)}${pad(String(r.c.cik), 12)}${pad(ymd, 12)}${pad(file(r), 52)}`),
    ].join('\n') + '\n';
  return [
    { path: `sec/index/daily/master.${ymd}.idx`, content: master },
    { path: `sec/index/daily/form.${ymd}.idx`, content: form },
  ];
}

/** Every layer file of the sample world. */
export function* edgarLayerFiles(
  companies: SampleCompany[],
  seed: number,
  filingsOf: (c: SampleCompany) => SampleFiling[],
): Generator<SampleFile> {
  const pool = directorPool(Math.max(20, Math.round(companies.length / 3)), seed);
  const recentDays = new Map<string, Array<{ c: SampleCompany; f: SampleFiling }>>();
  const since = addDays(SAMPLE_TODAY, -45);
  for (const c of companies) {
    const filings = filingsOf(c);
    const people = companyPeople(c, seed, pool);
    const rng = new Rng(seed).fork(`layers:${c.cik}`);
    yield { path: `sec/companyfacts/CIK${padCik(c.cik)}.json`, content: companyFactsJson(c, filings, seed) };
    const folder = (f: SampleFiling) => `sec/filings/${c.cik}/${f.accessionNumber.replace(/-/g, '')}`;
    const tenK = filings.find((f) => f.form === '10-K');
    if (tenK) yield { path: `${folder(tenK)}/${tenK.primaryDocument}`, content: tenKHtml(c, tenK, people, seed) };
    // The latest 8-K of each kind (filings are newest first).
    const seen = new Set<string>();
    for (const f of filings) {
      if (f.form !== '8-K' || seen.has(f.items)) continue;
      seen.add(f.items);
      const html = eightKHtml(c, f, people, seed);
      if (f.items.includes('2.02') && rng.bool(0.15))
        yield { path: `${folder(f)}/${f.accessionNumber}.txt`, content: completeSubmission(c, f, html) };
      else yield { path: `${folder(f)}/${f.primaryDocument}`, content: html };
    }
    // Forms 3/4: CEO and CFO as officers, directors from the shared pool.
    const period = addDays(tenK?.filingDate ?? '2026-03-01', rng.int(1, 60));
    const owners: Array<[SamplePerson, { director: boolean; officerTitle: string | null }, '3' | '4']> = [
      [people.ceo, { director: true, officerTitle: 'President and CEO' }, '4'],
      [people.cfo, { director: false, officerTitle: 'EVP and CFO' }, rng.bool(0.3) ? '3' : '4'],
      ...people.directors.map(
        (d) =>
          [d, { director: true, officerTitle: null }, '4'] as [SamplePerson, { director: boolean; officerTitle: string | null }, '3' | '4'],
      ),
    ];
    for (const [i, [person, rel, form]] of owners.entries()) {
      const acc = `${padCik(person.cik)}-${period.slice(2, 4)}-${String(((c.cik % 90000) * 10 + i) % 1e6).padStart(6, '0')}`;
      yield {
        path: `sec/ownership/${c.cik}/${acc.replace(/-/g, '')}/form${form}.xml`,
        content: ownershipXml(c, person, rel, form, period, seed),
      };
    }
    for (const f of filings) if (f.filingDate >= since) recentDays.set(f.filingDate, [...(recentDays.get(f.filingDate) ?? []), { c, f }]);
  }
  // Daily index files of the last three days with filings.
  for (const day of [...recentDays.keys()].sort().slice(-3)) yield* dailyIndexFiles(day, recentDays.get(day)!);
}
