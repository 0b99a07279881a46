/** The well-formed text rule lives in engine/ so workflow code and db/ can use it too; see there. */
export {
  findUnstorableText,
  REPLACEMENT_CHARACTER,
  storableString,
  textProblem,
  toStorable,
  wellFormedJsonText,
  wellFormedParams,
  type DepthFinding,
  type TextFinding,
} from '../../engine/wellFormedText';
