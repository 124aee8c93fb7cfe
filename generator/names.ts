// Name pools for synthetic releases: people, clubs and competitions in the spellings real registers hold
// (diacritics, Ł/Ø/ß, Cyrillic, Chinese, Arabic, Japanese, Korean), so search folding and CSV quoting get exercised.

/** A source of independent u32 draws for one entity: draw(k) is the k-th. */
export type Draw = (k: number) => number;

const at = <T>(items: readonly T[], u: number): T => items[u % items.length];

interface Culture {
  weight: number;
  country: readonly string[];
  given: readonly string[];
  family: readonly string[];
  /** Syllables to build more family names from (prefix + suffix), for variety at 400k players. */
  prefix?: readonly string[];
  suffix?: readonly string[];
  /** Family name written first with no space (Chinese, Japanese, Korean). */
  familyFirst?: boolean;
  /** Latin transliterations, index-aligned with given / family, for aliases of non-Latin names. */
  givenLatin?: readonly string[];
  familyLatin?: readonly string[];
}

const CULTURES: readonly Culture[] = [
  {
    weight: 18,
    country: ['England', 'Scotland', 'Wales', 'Northern Ireland'],
    given: ['Cole', 'Harry', 'Jack', 'Declan', 'Bukayo', 'Marcus', 'Phil', 'Jordan', 'Mason', 'Reece', 'Lucy', 'Leah', 'Millie', 'Alessia', 'Beth', 'Kieran', 'Ollie', 'Callum'],
    family: ['Palmer', 'Kane', 'Grealish', 'Rice', 'Saka', 'Rashford', 'Foden', 'Henderson', 'Mount', 'James', 'Bronze', 'Williamson', 'Bright', 'Russo', 'Mead', "O'Neill", 'McTominay', 'Trippier'],
    prefix: ['Ash', 'Brad', 'Hol', 'Whit', 'Black', 'Green', 'Lang', 'Thorn', 'Wood', 'Fair', 'Brook', 'Hart'],
    suffix: ['ford', 'ley', 'ton', 'field', 'more', 'combe', 'well', 'by', 'ham', 'worth'],
  },
  {
    weight: 10,
    country: ['Germany', 'Austria', 'Switzerland'],
    given: ['Thomas', 'Joshua', 'Leon', 'Kai', 'Florian', 'Jürgen', 'Lena', 'Alexandra', 'Manuel', 'Jonas', 'Jörg', 'Björn', 'Gisela'],
    family: ['Müller', 'Kimmich', 'Goretzka', 'Havertz', 'Wirtz', 'Klopp', 'Oberdorf', 'Popp', 'Neuer', 'Schürrle', 'Großkreutz', 'Weiß', 'Löw'],
    prefix: ['Schwein', 'Kloster', 'Berg', 'Hof', 'Wald', 'Stein', 'Rosen', 'Groß', 'Baum', 'Brück', 'Fürst'],
    suffix: ['mann', 'steiger', 'hauser', 'müller', 'berger', 'meier', 'feld', 'bach', 'häuser', 'stätter'],
  },
  {
    weight: 10,
    country: ['Spain', 'Argentina', 'Mexico', 'Uruguay', 'Colombia', 'Chile'],
    given: ['Sergio', 'Andrés', 'Íker', 'Álvaro', 'Pedro', 'Aitana', 'Jenni', 'Ángel', 'Raúl', 'Nicolás', 'Martín', 'Lucía'],
    family: ['Ramos', 'Iniesta', 'Casillas', 'Morata', 'González López', 'Bonmatí', 'Hermoso', 'Muñoz', 'Di María', 'Suárez', 'Peña', 'Ibáñez'],
    prefix: ['Fern', 'Rodr', 'Mart', 'Sánch', 'Pér', 'Góm', 'Hern', 'Díaz de ', 'Ordó', 'Bení'],
    suffix: ['ández', 'íguez', 'ínez', 'ez', 'ñez', 'itez', 'ado', 'eda'],
  },
  {
    weight: 9,
    country: ['Brazil', 'Portugal', 'Angola', 'Cape Verde'],
    given: ['João', 'Cristiano', 'Bruno', 'Zé', 'Rúben', 'Vinícius', 'Marta', 'Gonçalo', 'Antônio', 'Thiago', 'Luís'],
    family: ['Félix', 'Ronaldo', 'Fernandes', 'Roberto', 'Dias', 'Júnior', 'Vieira da Silva', 'Gonçalves', 'Conceição', 'Guimarães', 'Simões'],
    prefix: ['Gonç', 'Magalh', 'Assun', 'Bast', 'Figu', 'Cam', 'Ribe'],
    suffix: ['alves', 'ães', 'ção', 'os', 'eiredo', 'ões', 'iro'],
  },
  {
    weight: 8,
    country: ['France', 'Belgium', "Côte d'Ivoire", 'Senegal', 'Cameroon'],
    given: ['Kylian', "N'Golo", 'Antoine', 'Hugo', 'Wendie', 'Amandine', 'Aurélien', 'Théo', 'Raphaël', 'Éric', 'Jérôme'],
    family: ['Mbappé', 'Kanté', 'Griezmann', 'Lloris', 'Renard', 'Henry', 'Benzema', 'Tchouaméni', 'Hernández', 'Cantona', 'Boateng'],
    prefix: ['Beau', 'Mont', 'Dela', 'Ri', 'Du', 'Le', 'Ville', 'Roche'],
    suffix: ['champ', 'fort', 'croix', 'bert', 'mont', 'noir', 'neuve', 'lière'],
  },
  {
    weight: 6,
    country: ['Poland'],
    given: ['Łukasz', 'Robert', 'Wojciech', 'Jakub', 'Michał', 'Zbigniew', 'Ewa', 'Krzysztof', 'Paweł', 'Grzegorz'],
    family: ['Piszczek', 'Lewandowski', 'Szczęsny', 'Błaszczykowski', 'Pająk', 'Boniek', 'Kwiatkowska', 'Żurawski', 'Krychowiak', 'Glik'],
    prefix: ['Kowal', 'Nowa', 'Wiśni', 'Lewan', 'Zieli', 'Szczę', 'Błasz', 'Kwiat', 'Woźni', 'Dąbr'],
    suffix: ['ski', 'ewski', 'owski', 'czyk', 'ak', 'ńska', 'owicz'],
  },
  {
    weight: 5,
    country: ['Norway', 'Denmark', 'Sweden', 'Iceland', 'Faroe Islands'],
    given: ['Martin', 'Erling', 'Ole Gunnar', 'Søren', 'Bjørn', 'Ada', 'Zlatan', 'Åsa', 'Gylfi', 'Sölvi'],
    family: ['Ødegaard', 'Haaland', 'Solskjær', 'Kjær', 'Hegerberg', 'Sørloth', 'Strøm', 'Ibrahimović', 'Sigurðsson', 'Höjbjerg'],
    prefix: ['Sol', 'Berg', 'Ny', 'Lund', 'Ström', 'Dahl', 'Fjeld', 'Øst', 'Å'],
    suffix: ['gaard', 'sen', 'strøm', 'kjær', 'heim', 'vik', 'berg', 'sson', 'dóttir'],
  },
  {
    weight: 5,
    country: ['Türkiye', 'Croatia', 'Serbia', 'Bosnia and Herzegovina', 'Romania', 'Czech Republic'],
    given: ['İlkay', 'Hakan', 'Arda', 'Çağlar', 'Luka', 'Ivan', 'Dušan', 'Mateo', 'Tomáš', 'Gheorghe', 'Edin'],
    family: ['Gündoğan', 'Çalhanoğlu', 'Güler', 'Söyüncü', 'Modrić', 'Perišić', 'Vlahović', 'Kovačić', 'Souček', 'Hagi', 'Džeko'],
    prefix: ['Kovač', 'Petr', 'Jovan', 'Marin', 'Nov', 'Horv', 'Stan'],
    suffix: ['ić', 'ović', 'escu', 'ák', 'oğlu', 'ek', 'ovič'],
  },
  {
    weight: 5,
    country: ['Russia', 'Ukraine', 'Belarus', 'Bulgaria'],
    given: ['Артём', 'Игорь', 'Александр', 'Фёдор', 'Андрей', 'Юрий'],
    family: ['Дзюба', 'Акинфеев', 'Головин', 'Смолов', 'Аршавин', 'Жирков'],
    givenLatin: ['Artyom', 'Igor', 'Aleksandr', 'Fyodor', 'Andrey', 'Yuri'],
    familyLatin: ['Dzyuba', 'Akinfeev', 'Golovin', 'Smolov', 'Arshavin', 'Zhirkov'],
  },
  {
    weight: 4,
    country: ['China'],
    familyFirst: true,
    given: ['磊', '琳芃', '霜', '铁', '霆', '世奇'],
    family: ['武', '张', '王', '李', '郑', '于'],
    givenLatin: ['Lei', 'Linpeng', 'Shuang', 'Tie', 'Ting', 'Shiqi'],
    familyLatin: ['Wu', 'Zhang', 'Wang', 'Li', 'Zheng', 'Yu'],
  },
  {
    weight: 4,
    country: ['Egypt', 'Saudi Arabia', 'Morocco', 'Algeria', 'Qatar'],
    given: ['محمد', 'رياض', 'أشرف', 'سالم', 'ياسين'],
    family: ['صلاح', 'محرز', 'حكيمي', 'الدوسري', 'بونو'],
    givenLatin: ['Mohamed', 'Riyad', 'Achraf', 'Salem', 'Yassine'],
    familyLatin: ['Salah', 'Mahrez', 'Hakimi', 'Al-Dawsari', 'Bounou'],
  },
  {
    weight: 3,
    country: ['Japan'],
    familyFirst: true,
    given: ['薫', '建英', '航', '麻也', '真司'],
    family: ['三笘', '久保', '遠藤', '吉田', '香川'],
    givenLatin: ['Kaoru', 'Takefusa', 'Wataru', 'Maya', 'Shinji'],
    familyLatin: ['Mitoma', 'Kubo', 'Endo', 'Yoshida', 'Kagawa'],
  },
  {
    weight: 3,
    country: ['South Korea'],
    familyFirst: true,
    given: ['흥민', '민재', '희찬', '강인'],
    family: ['손', '김', '황', '이'],
    givenLatin: ['Heung-min', 'Min-jae', 'Hee-chan', 'Kang-in'],
    familyLatin: ['Son', 'Kim', 'Hwang', 'Lee'],
  },
  {
    weight: 4,
    country: ['Netherlands', 'Curaçao', 'Suriname'],
    given: ['Virgil', 'Frenkie', 'Matthijs', 'Vivianne', 'Daley', 'Sjoerd', 'Ruud'],
    family: ['van Dijk', 'de Jong', 'de Ligt', 'Miedema', 'Blind', "van 't Schip", 'Gullit'],
    prefix: ['van den ', 'de ', 'van der ', 'ter '],
    suffix: ['Berg', 'Bosch', 'Meer', 'Heuvel', 'Velde', 'Stegen'],
  },
];

const CULTURE_TOTAL = CULTURES.reduce((s, c) => s + c.weight, 0);

function cultureOf(u: number): Culture {
  let x = u % CULTURE_TOTAL;
  for (const c of CULTURES) {
    if (x < c.weight) return c;
    x -= c.weight;
  }
  return CULTURES[0];
}

export interface PersonName {
  label: string;
  /** Short form, e.g. `C. Palmer` (or the bare family name for family-first scripts). */
  short: string;
  /** Latin transliteration when the label is not Latin-script, else null. */
  latin: string | null;
  country: string;
}

/** A person's name from draws 0..4. */
export function personName(draw: Draw): PersonName {
  const c = cultureOf(draw(0));
  const gi = draw(1) % c.given.length;
  const given = c.given[gi];
  let family: string;
  let fi = draw(2) % c.family.length;
  if (c.prefix && c.suffix && draw(3) % 10 < 4) {
    family = at(c.prefix, draw(3) >>> 8) + at(c.suffix, draw(4));
    fi = -1;
  } else {
    family = c.family[fi];
  }
  const country = at(c.country, draw(4) >>> 8);
  if (c.familyFirst) {
    const latin = c.givenLatin && c.familyLatin ? `${c.familyLatin[fi]} ${c.givenLatin[gi]}` : null;
    return { label: family + given, short: family + given, latin, country };
  }
  const latin = c.givenLatin && c.familyLatin && fi >= 0 ? `${c.givenLatin[gi]} ${c.familyLatin[fi]}` : null;
  return { label: `${given} ${family}`, short: `${given[0]}. ${family}`, latin, country };
}

/** Real club names, used for the first teams so the well-known spellings are always present. */
const FAMOUS_TEAMS: readonly [string, string][] = [
  ['Arsenal', 'England'],
  ['Chelsea', 'England'],
  ['TSG Hoffenheim 1899', 'Germany'],
  ['ŁKS Łódź', 'Poland'],
  ['São Paulo FC', 'Brazil'],
  ['北京国安', 'China'],
  ['Зенит', 'Russia'],
  ['الأهلي', 'Egypt'],
  ['1. FC Köln', 'Germany'],
  ['Borussia Mönchengladbach', 'Germany'],
  ['Atlético Madrid', 'Spain'],
  ['Beşiktaş', 'Türkiye'],
  ['Fenerbahçe', 'Türkiye'],
  ['Tromsø IL', 'Norway'],
  ['Malmö FF', 'Sweden'],
  ['Ferencváros', 'Hungary'],
  ['Śląsk Wrocław', 'Poland'],
  ['Brighton & Hove Albion', 'England'],
  ['Club Social, Cultural y Deportivo Grecia', 'Ecuador'],
  ['Club "The Strongest"', 'Bolivia'],
  ['Grêmio', 'Brazil'],
  ['Spartak Moskva', 'Russia'],
  ['الزمالك', 'Egypt'],
  ['上海海港', 'China'],
  ['浦和レッズ', 'Japan'],
  ['전북 현대 모터스', 'South Korea'],
  ['Widzew Łódź', 'Poland'],
  ['FC Zürich', 'Switzerland'],
];

const TOWNS: readonly [string, string][] = [
  ['Łódź', 'Poland'], ['Kraków', 'Poland'], ['Gdańsk', 'Poland'], ['São Paulo', 'Brazil'], ['Málaga', 'Spain'],
  ['Córdoba', 'Spain'], ['Köln', 'Germany'], ['Nürnberg', 'Germany'], ['Hoffenheim', 'Germany'], ['Zürich', 'Switzerland'],
  ['Tromsø', 'Norway'], ['İstanbul', 'Türkiye'], ['Guimarães', 'Portugal'], ['Besançon', 'France'], ['Brønshøj', 'Denmark'],
  ['Örebro', 'Sweden'], ['Reykjavík', 'Iceland'], ['Plzeň', 'Czech Republic'], ['České Budějovice', 'Czech Republic'],
  ['Győr', 'Hungary'], ['Timișoara', 'Romania'], ['Split', 'Croatia'], ['Leeds', 'England'], ['Bristol', 'England'],
  ['Sheffield', 'England'], ['Wrexham', 'Wales'], ['Dundee', 'Scotland'], ['Porto', 'Portugal'], ['Lyon', 'France'],
  ['Sevilla', 'Spain'], ['Mainz', 'Germany'], ['Bochum', 'Germany'], ['Rosario', 'Argentina'], ['Medellín', 'Colombia'],
  ['Curitiba', 'Brazil'], ['Belém', 'Brazil'], ['Dakar', 'Senegal'], ['Abidjan', "Côte d'Ivoire"], ['Osaka', 'Japan'],
  ['Ulsan', 'South Korea'], ['Eindhoven', 'Netherlands'], ['Groningen', 'Netherlands'], ['Ålesund', 'Norway'],
];

const TEAM_PATTERNS: readonly string[] = [
  '{} FC', 'FC {}', '{} United', '{} City', 'Sporting {}', 'Racing {}', 'Real {}', '1. FC {}', '{} 1899', 'SV {}',
  'AS {}', 'Dynamo {}', '{} Wanderers', 'Athletic {}', '{} Rovers', 'Deportivo {}', 'Olympique {}', 'Union {}',
];

const NON_LATIN_TEAMS: readonly [readonly string[], readonly string[], string][] = [
  [['北京', '上海', '广州', '山东', '天津', '河南'], ['国安', '海港', '恒大', '泰山', '津门虎', '队'], 'China'],
  [['Зенит', 'Спартак', 'Динамо', 'Локомотив', 'Ростов', 'Торпедо'], [' Москва', ' Санкт-Петербург', ' Казань', '-2', ''], 'Russia'],
  [['الأهلي', 'الزمالك', 'الهلال', 'النصر', 'الاتحاد'], [' جدة', ' القاهرة', ' الرياض', ''], 'Saudi Arabia'],
];

/** A club name and country from draws 0..3; female teams carry the usual " Women" suffix. */
export function teamName(ordinal: number, draw: Draw, female: boolean): { label: string; country: string } {
  if (ordinal < FAMOUS_TEAMS.length) {
    const [label, country] = FAMOUS_TEAMS[ordinal];
    return { label, country };
  }
  let label: string;
  let country: string;
  if (draw(0) % 10 === 0) {
    const [heads, tails, c] = at(NON_LATIN_TEAMS, draw(1));
    label = at(heads, draw(2)) + at(tails, draw(3));
    country = c;
  } else {
    const [town, c] = at(TOWNS, draw(1));
    label = at(TEAM_PATTERNS, draw(2)).replace('{}', town);
    country = c;
  }
  return { label: female ? `${label} Women` : label, country };
}

const FAMOUS_COMPETITIONS: readonly [string, string][] = [
  ['Premier League', 'England'],
  ['Bundesliga', 'Germany'],
  ['Ekstraklasa', 'Poland'],
  ['Campeonato Brasileiro Série A', 'Brazil'],
  ['中国足球协会超级联赛', 'China'],
  ['Российская Премьер-лига', 'Russia'],
  ['الدوري المصري الممتاز', 'Egypt'],
  ['LaLiga', 'Spain'],
  ['Serie A', 'Italy'],
  ['Ligue 1', 'France'],
  ['Süper Lig', 'Türkiye'],
  ['Eliteserien', 'Norway'],
  ['UEFA Champions League', ''],
  ['DFB-Pokal', 'Germany'],
  ['Copa del Rey', 'Spain'],
  ["Women's Super League", 'England'],
  ['J1リーグ', 'Japan'],
  ['K리그1', 'South Korea'],
];

const COMPETITION_LEVELS = [
  'First Division', 'Second Division', 'Premier League', 'Cup', 'Super Cup', "Women's League", 'U19 League',
  'Regional League', 'Third Division',
];

/** A competition name and country. */
export function competitionName(ordinal: number, draw: Draw): { label: string; country: string } {
  if (ordinal < FAMOUS_COMPETITIONS.length) {
    const [label, country] = FAMOUS_COMPETITIONS[ordinal];
    return { label, country };
  }
  const [, country] = at(TOWNS, draw(0));
  return { label: `${country} ${at(COMPETITION_LEVELS, draw(1))}`, country };
}

export const STAGE_NAMES = [
  'Regular Season', 'Group A', 'Group B', 'Group C', 'Group D', 'Round of 16', 'Quarter-finals', 'Semi-finals',
  'Final', 'Play-offs', 'Qualifying Round',
] as const;

/** Knockout stages play two legs. */
export const isKnockout = (stage: string): boolean =>
  stage === 'Round of 16' || stage === 'Quarter-finals' || stage === 'Semi-finals' || stage === 'Play-offs';

/** ASCII slug of a name (diacritics folded, Ł/Ø/ß spelled out), as provider URLs carry them. */
export function slugify(s: string): string {
  const folded = s
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/ł/g, 'l')
    .replace(/ø/g, 'o')
    .replace(/ß/g, 'ss')
    .replace(/ı/g, 'i')
    .replace(/đ/g, 'd')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return folded || 'x';
}
